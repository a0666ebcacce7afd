import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { parseCronFields } from '../oracle/cron-fields.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface CronOccurrenceBounds {
  /**
   * The occurrence keys the schedules must have produced in the run
   * (`cron:<schedule>:<instant>`), from the harness's cron oracle
   * (harness/oracle) or written by hand. Each must exist exactly once. Default
   * [] : nothing expected, so nothing to judge (unknown), unless a duplicate
   * or a wrong run_at is seen.
   */
  expectedKeys: string[];
  /** Keys that may exist besides the expected ones (edges of the window, rows written ahead). Anything else is unexpected. Default []. */
  allowedKeys: string[];
}

/** One materialized occurrence: which schedule, and the instant it fires, as epoch ms. */
export interface Occurrence {
  schedule: string;
  instantMs: number;
}

/**
 * Parses `cron:<schedule>:<instant>` (also `cron:<schedule>@<instant>`), where
 * the instant is ISO-8601 (which itself contains colons) or epoch ms. The
 * schedule is everything before the first separator whose remainder parses as
 * an instant. Returns undefined for keys that are not occurrence keys.
 */
export function parseOccurrenceKey(key: string): Occurrence | undefined {
  if (!key.startsWith('cron:')) return undefined;
  const rest = key.slice(5);
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] !== ':' && rest[i] !== '@') continue;
    const instant = parseInstant(rest.slice(i + 1));
    if (i > 0 && instant !== undefined) return { schedule: rest.slice(0, i), instantMs: instant };
  }
  return undefined;
}

function parseInstant(s: string): number | undefined {
  if (/^\d{10,}$/.test(s)) return Number(s);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(s)) return undefined;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? undefined : ms;
}

const idOf = (o: Occurrence) => `${o.schedule}@${o.instantMs}`;

/**
 * One job per cron occurrence, at its instant. The unique idempotency key
 * already refuses two rows with the same text; this also catches the same
 * occurrence under two spellings or two buckets (a node that wrote `+01:00`
 * and one that wrote `Z`, a key rounded differently), by comparing
 * (schedule, instant). Each cron job's run_at must equal its occurrence's
 * instant. Against the expected keys it finds missing runs, and against
 * expected plus allowed ones the runs nobody asked for (a second 01:30 on a
 * fall-back night under a run-once policy, an instant off the schedule).
 * Nothing expected: unknown, a window too short to judge.
 */
/** An interval schedule (hour field `*`) follows real elapsed time whatever its DST policy; an expression the oracle cannot read counts by its policy. */
function dstLabel(cron: string, dstPolicy: string): string {
  try {
    return parseCronFields(cron).everyHour ? 'interval' : dstPolicy;
  } catch {
    return dstPolicy;
  }
}

/**
 * What the expected occurrences covered, from the schedules the database
 * holds: per DST policy (interval schedules apart), catch-up policy and zone,
 * `schedules/occurrences`, e.g. "skip-first 1/0" for a skipped spring night.
 */
function coverage(final: FinalState, expected: ReadonlyMap<string, string>): string {
  if (!final.schedules?.length || expected.size === 0) return '';
  const perSchedule = new Map<string, number>();
  for (const key of expected.values()) {
    const occ = parseOccurrenceKey(key)!;
    perSchedule.set(occ.schedule, (perSchedule.get(occ.schedule) ?? 0) + 1);
  }
  const groups = (label: (s: NonNullable<FinalState['schedules']>[number]) => string) => {
    const by = new Map<string, [number, number]>();
    for (const sc of final.schedules!) {
      const [n, occurrences] = by.get(label(sc)) ?? [0, 0];
      by.set(label(sc), [n + 1, occurrences + (perSchedule.get(sc.id) ?? 0)]);
    }
    return [...by].sort(([a], [b]) => a.localeCompare(b)).map(([l, [n, o]]) => `${l} ${fmt(n)}/${fmt(o)}`).join(', ');
  };
  return (
    `; judged (schedules/occurrences) by DST policy: ${groups((sc) => dstLabel(sc.cron, sc.dstPolicy))}` +
    `; by catch-up: ${groups((sc) => sc.catchUp)}; by zone: ${groups((sc) => sc.timezone)}`
  );
}

export function checkCronOccurrence(_history: readonly HistoryEvent[], final: FinalState, bounds: CronOccurrenceBounds): InvariantResult {
  const seen = new Map<string, string[]>();
  const unparsable: string[] = [];
  const wrongRunAt: { key: string; runAt: string }[] = [];
  for (const job of final.jobs) {
    const key = job.idempotencyKey;
    if (!key?.startsWith('cron:')) continue;
    const occ = parseOccurrenceKey(key);
    if (!occ) {
      unparsable.push(key);
      continue;
    }
    if (job.runAtMs !== undefined && job.runAtMs !== occ.instantMs) wrongRunAt.push({ key, runAt: new Date(job.runAtMs).toISOString() });
    const id = idOf(occ);
    seen.set(id, [...(seen.get(id) ?? []), key]);
  }
  const duplicates = [...seen.values()].filter((keys) => keys.length > 1);
  const parse = (list: string[], into: Map<string, string>, bad: string[]) => {
    for (const key of list) {
      const occ = parseOccurrenceKey(key);
      if (occ) into.set(idOf(occ), key);
      else bad.push(key);
    }
  };
  const expected = new Map<string, string>();
  const allowed = new Map<string, string>();
  const badExpected: string[] = [];
  parse(bounds.expectedKeys, expected, badExpected);
  parse(bounds.allowedKeys, allowed, badExpected);
  const missing = [...expected].filter(([id]) => !seen.has(id)).map(([, key]) => key);
  const extra = expected.size > 0 ? [...seen].filter(([id]) => !expected.has(id) && !allowed.has(id)).map(([, keys]) => keys[0]) : [];
  const examples = [
    ...firstN(duplicates).map((keys) => ({ duplicate: keys })),
    ...firstN(wrongRunAt).map((w) => ({ wrongRunAt: w })),
    ...firstN(missing).map((key) => ({ missing: key })),
    ...firstN(extra).map((key) => ({ extra: key })),
    ...firstN([...unparsable, ...badExpected]).map((key) => ({ unparsable: key })),
  ];
  const occurrences = [...seen.values()].reduce((n, keys) => n + keys.length, 0);
  const broken = duplicates.length + wrongRunAt.length + missing.length + extra.length + unparsable.length + badExpected.length;
  return {
    name: 'one-job-per-cron-occurrence',
    pass: broken > 0 ? false : expected.size === 0 ? 'unknown' : true,
    figure:
      `${fmt(occurrences)} occurrence jobs: ${fmt(duplicates.length)} duplicated, ${fmt(wrongRunAt.length)} with run_at off their instant, ` +
      `${fmt(missing.length)} missing and ${fmt(extra.length)} unexpected of ${fmt(expected.size)} expected (${fmt(allowed.size)} allowed)` +
      (unparsable.length + badExpected.length ? `; ${fmt(unparsable.length + badExpected.length)} keys not of the form cron:<schedule>:<instant>` : '') +
      (expected.size === 0 ? '; no occurrence expected in the window: nothing to judge' : coverage(final, expected)),
    bound: 'each expected occurrence exactly once at its instant, nothing off the schedule',
    // Nothing expected, nothing judged: the oracle named no occurrence the run could have missed or doubled.
    judged: { n: expected.size, what: 'expected cron occurrences' },
    ...(examples.length ? { examples } : {}),
  };
}

export const cronOccurrence: CheckerDef<CronOccurrenceBounds> = {
  name: 'one-job-per-cron-occurrence',
  says: 'each cron occurrence (from the harness\'s own oracle) became exactly one job at its instant; none missing, none off the schedule',
  check: checkCronOccurrence,
  bounds: { expectedKeys: 'string[]', allowedKeys: 'string[]' },
  defaults: { expectedKeys: [], allowedKeys: [] },
};
