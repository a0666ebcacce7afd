import type { EntryResult } from '../gate/verdict.ts';
import type { PromiseEntry } from './types.ts';

/**
 * What one gate run says of each promise:
 * - `vouched`: every pair held (none undecided), and together they judged at least `minJudged` events;
 * - `violated`: an invariant of the promise came out false in one of its scenarios;
 * - `unvouched`: nothing false, but a pair could not decide, or the pairs judged fewer than
 *   `minJudged` events (a check with nothing to judge is no pass);
 * - `not run`: not all of its scenarios were in this gate run (`--only`, `--skip`);
 * - `test` / `gap`: vouched for outside the gate, or not at all (listed, never counted as vouched).
 */
export type PromiseVerdict = 'vouched' | 'violated' | 'unvouched' | 'not run' | 'test' | 'gap';

export interface PromiseRow {
  id: string;
  promise: string;
  verdict: PromiseVerdict;
  /** Events its invariants judged in this run, summed over its pairs (gate promises). */
  judged: number;
  minJudged: number;
  /** One part per pair: `scenario/invariant: held, 1,234 retries in backoff`. */
  detail: string[];
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** Judges every promise from the gate's scenario runs (mutant runs are ignored here: see mutantRows). Pure. */
export function judgePromises(ledger: readonly PromiseEntry[], results: readonly EntryResult[]): PromiseRow[] {
  const runs = new Map(results.filter((r) => r.entry.mutant === null).map((r) => [r.entry.scenario, r]));
  return ledger.map((e): PromiseRow => {
    const base = { id: e.id, promise: e.promise, judged: 0, minJudged: 0 };
    const v = e.vouch;
    if (v.by === 'test') return { ...base, verdict: 'test', detail: [`${v.file}: ${v.tests.join('; ')}`, `not in the gate: ${v.notInGate}`] };
    if (v.by === 'gap') return { ...base, verdict: 'gap', detail: [v.why] };
    // A promise is judged only on a gate run that ran all of its scenarios (not one cut by --only/--skip).
    if (v.judgedBy.some((p) => !runs.has(p.scenario))) {
      const missing = [...new Set(v.judgedBy.filter((p) => !runs.has(p.scenario)).map((p) => p.scenario))];
      return { ...base, verdict: 'not run', minJudged: v.minJudged, detail: [`not in this run: ${missing.join(', ')}`] };
    }
    let judged = 0;
    let ran = 0;
    let violated = false;
    // A pair the ledger names is one that makes the situation happen: one that could not decide leaves the promise unvouched, whatever the others judged.
    let undecided = false;
    const detail: string[] = [];
    for (const { scenario, invariant } of v.judgedBy) {
      const run = runs.get(scenario);
      if (!run) continue;
      ran++;
      const inv = run.summary?.invariants.find((i) => i.name === invariant);
      if (!inv) {
        detail.push(`${scenario}/${invariant}: no result (${run.reason})`);
        continue;
      }
      const n = inv.pass === 'unknown' ? 0 : (inv.judged?.n ?? 0);
      judged += n;
      if (inv.pass === false) violated = true;
      if (inv.pass === 'unknown') undecided = true;
      const state = inv.pass === true ? 'held' : inv.pass === false ? 'VIOLATED' : 'inconclusive';
      detail.push(`${scenario}/${invariant}: ${state}, ${fmt(n)} ${inv.judged?.what ?? 'events (not counted by this run)'}`);
    }
    const verdict: PromiseVerdict = ran === 0 ? 'not run' : violated ? 'violated' : !undecided && judged >= v.minJudged ? 'vouched' : 'unvouched';
    return { ...base, verdict, judged, minJudged: v.minJudged, detail };
  });
}

export interface MutantRow {
  id: string;
  /** One per mutant of the promise: `no-jitter: caught by retry-spread` or why not. */
  mutants: { mutant: string; outcome: 'caught' | 'survived' | 'inconclusive' | 'not run'; by: string | null; reason: string }[];
}

/** For each gate promise, what `gate --mutants` showed of its mutants. Pure. */
export function mutantRows(ledger: readonly PromiseEntry[], results: readonly EntryResult[]): MutantRow[] {
  const runs = new Map(results.filter((r) => r.entry.mutant !== null).map((r) => [r.entry.mutant!, r]));
  return ledger.flatMap((e) => {
    if (e.vouch.by !== 'gate') return [];
    return [
      {
        id: e.id,
        mutants: e.vouch.mutants.map((m) => {
          const r = runs.get(m);
          if (!r) return { mutant: m, outcome: 'not run' as const, by: null, reason: 'not in this run' };
          const outcome = r.outcome === 'pass' ? ('caught' as const) : r.outcome === 'fail' ? ('survived' as const) : ('inconclusive' as const);
          return { mutant: m, outcome, by: outcome === 'caught' ? r.entry.mustFail : null, reason: r.reason };
        }),
      },
    ];
  });
}

/** True when the promises make the gate fail: one violated, or judged below its minimum. */
export function promisesFail(rows: readonly PromiseRow[]): boolean {
  return rows.some((r) => r.verdict === 'violated' || r.verdict === 'unvouched');
}

/** Counts by verdict, for the gate's closing line. */
export function promiseCounts(rows: readonly PromiseRow[]): Record<PromiseVerdict, number> {
  const c: Record<PromiseVerdict, number> = { vouched: 0, violated: 0, unvouched: 0, 'not run': 0, test: 0, gap: 0 };
  for (const r of rows) c[r.verdict]++;
  return c;
}
