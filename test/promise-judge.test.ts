import { describe, expect, it } from 'vitest';
import type { EntryResult, ReportedInvariant } from '../harness/gate/verdict.ts';
import { judgePromises, mutantRows, promiseCounts, promisesFail } from '../harness/promises/judge.ts';
import { promisesJunit, promiseTable } from '../harness/promises/report.ts';
import type { PromiseEntry } from '../harness/promises/types.ts';

/** Per-promise verdicts from gate results: pure, over hand-written runs. */
const promise = (id: string, pairs: [string, string][], minJudged: number): PromiseEntry => ({
  id,
  promise: `${id} holds`,
  documented: [],
  covers: {},
  vouch: { by: 'gate', judgedBy: pairs.map(([scenario, invariant]) => ({ scenario, invariant: invariant as never })), minJudged, mutants: [] },
});

const inv = (name: string, pass: boolean | 'unknown', n?: number): ReportedInvariant => ({ name, pass, figure: '', bound: '', ...(n === undefined ? {} : { judged: { n, what: 'claims' } }) });

function run(scenario: string, invariants: ReportedInvariant[], mutant: string | null = null, outcome: EntryResult['outcome'] = 'pass'): EntryResult {
  return {
    entry: { scenario, mutant: mutant as never, mustFail: mutant ? (invariants[0]?.name as never) : null, seed: 1 },
    exitCode: 0,
    durationMs: 1,
    summary: { scenario: { name: scenario }, seed: 1, verdict: 'pass', replayCommand: '', interrupted: false, invariants },
    dir: '',
    outcome,
    reason: outcome === 'pass' ? (mutant ? `caught by ${invariants[0]?.name}` : 'ok') : 'survived',
  };
}

describe('judgePromises', () => {
  const ledger = [
    promise('sums-pairs', [['a', 'x'], ['b', 'x']], 10),
    promise('too-few', [['a', 'y']], 100),
    promise('broken', [['a', 'z']], 1),
    promise('partial', [['a', 'x'], ['c', 'x']], 1),
    promise('only-unknown', [['b', 'y']], 1),
    promise('one-undecided', [['a', 'x'], ['b', 'y']], 1),
  ];
  const results = [run('a', [inv('x', true, 6), inv('y', true, 40), inv('z', false, 3)]), run('b', [inv('x', true, 5), inv('y', 'unknown', 500)])];
  const rows = Object.fromEntries(judgePromises(ledger, results).map((r) => [r.id, r]));

  it('sums the judged events of a promise over its scenario-invariant pairs, against its minimum', () => {
    expect(rows['sums-pairs']).toMatchObject({ verdict: 'vouched', judged: 11, minJudged: 10 });
  });

  it('a promise judged over fewer events than its minimum is unvouched, and fails the gate', () => {
    expect(rows['too-few']).toMatchObject({ verdict: 'unvouched', judged: 40 });
    expect(promisesFail([rows['too-few']])).toBe(true);
    expect(promisesFail([rows['sums-pairs']])).toBe(false);
  });

  it('an inconclusive invariant counts nothing, whatever it says it judged', () => {
    expect(rows['only-unknown']).toMatchObject({ verdict: 'unvouched', judged: 0 });
  });

  it('one undecided pair leaves the promise unvouched, even when another pair judged enough', () => {
    expect(rows['one-undecided']).toMatchObject({ verdict: 'unvouched', judged: 6 });
  });

  it('a false invariant violates the promise', () => {
    expect(rows.broken.verdict).toBe('violated');
    expect(promisesFail([rows.broken])).toBe(true);
  });

  it('a promise whose scenarios did not all run is not judged (a gate cut by --only)', () => {
    expect(rows.partial).toMatchObject({ verdict: 'not run', detail: ['not in this run: c'] });
    expect(promisesFail([rows.partial])).toBe(false);
  });

  it('tests and gaps are listed, never counted as vouched', () => {
    const gap: PromiseEntry = { id: 'g', promise: 'g', documented: [], covers: {}, vouch: { by: 'gap', why: 'nothing yet' } };
    const [row] = judgePromises([gap], results);
    expect(row).toMatchObject({ verdict: 'gap', detail: ['nothing yet'] });
    expect(promiseCounts([row, rows['sums-pairs']])).toMatchObject({ gap: 1, vouched: 1 });
  });

  it('renders a table and JUnit with one case per promise: unvouched and violated fail, gaps skip', () => {
    const all = Object.values(rows);
    expect(promiseTable(all)).toMatch(/too-few\s+UNVOUCHED\s+40 \(100\)/);
    const xml = promisesJunit(all);
    expect(xml).toContain('tests="6" failures="4"');
    expect(xml).toContain('judged 40 events, below its minimum of 100');
  });
});

describe('mutantRows', () => {
  it('says for each mutant of a promise whether the gate caught it and by which invariant', () => {
    const entry: PromiseEntry = { ...promise('p', [['a', 'x']], 1), vouch: { by: 'gate', judgedBy: [{ scenario: 'a', invariant: 'x' as never }], minJudged: 1, mutants: ['m1' as never, 'm2' as never, 'm3' as never] } };
    const rows = mutantRows([entry], [run('a', [inv('x', false, 3)], 'm1'), run('a', [inv('x', true, 3)], 'm2', 'fail')]);
    expect(rows[0].mutants).toEqual([
      { mutant: 'm1', outcome: 'caught', by: 'x', reason: 'caught by x' },
      { mutant: 'm2', outcome: 'survived', by: null, reason: 'survived' },
      { mutant: 'm3', outcome: 'not run', by: null, reason: 'not in this run' },
    ]);
  });
});
