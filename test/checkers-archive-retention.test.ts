// archive-retention on small hand-written histories, shaped as the archive-retention scenario's: the harness's
// readings of the day partitions, a 9-day step of the database clock, the archiver's graceful stop, one reading at
// rest. Violating ones too: a partition past retention kept, one within it dropped, a day ahead missing.
import { describe, expect, it } from 'vitest';
import { checkArchiveRetention, partitionDay } from '../harness/checkers/archive-retention.ts';
import { runCheckers } from '../harness/checkers/index.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState } from './support/history-builder.ts';

const final = finalState([]);
const DAY = 86_400_000;
const bounds = { retentionDays: 7, partitionsAheadDays: 2, intervalMs: 1_000, slackMs: 5_000 };
/** Noon of 2026-12-07 (UTC) on the database clock, and that day's number. */
const NOON = Date.UTC(2026, 11, 7, 12);
const D = Math.floor(NOON / DAY);
const name = (day: number) => `job_history_p${new Date(day * DAY).toISOString().slice(0, 10).replace(/-/g, '')}`;
const span = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => name(from + i));

const read = (t: number, dbTime: number, partitions: string[]): HistoryEvent => ({ t, node: 'harness', dbTime, type: 'archive:partitions', partitions });
const started = (t: number): HistoryEvent => ({ t, node: 'archiver-0', type: 'process:started', pid: 7, role: 'archiver' });
const exited = (t: number, code: number | null = 0): HistoryEvent => ({ t, node: 'archiver-0', type: 'process:exited', pid: 7, role: 'archiver', code, signal: code === null ? 'SIGKILL' : null, expected: true });
const step = (t: number, fromMs: number, jumpMs: number): HistoryEvent => ({ t, node: 'nemesis', type: 'fault:injected', fault: 'db-clock-jump', detail: { jumpMs, dbBeforeMs: fromMs, dbAfterMs: fromMs + jumpMs } });

/**
 * The scenario's run: today (D) and two days ahead before the step; after it (D + 9) the first pass creates the
 * days from the oldest done row's (D) to D + 11 and drops D and D + 1. `atRest` is the last reading's partitions.
 */
function run(atRest: string[], o: { stepDays?: number } = {}): HistoryEvent[] {
  const stepDays = o.stepDays ?? 9;
  const after = NOON + stepDays * DAY;
  const afterDay = D + stepDays;
  return [
    started(0),
    read(1_000, NOON + 1_000, []),
    read(2_000, NOON + 2_000, span(D, D + 2)),
    step(3_000, NOON + 3_000, stepDays * DAY),
    ...[4_000, 8_000, 12_000].map((t) => read(t, after + t, span(Math.max(D + 2, afterDay - 7), afterDay + 2))),
    exited(20_000),
    read(20_100, after + 20_100, atRest),
  ];
}
const HELD = span(D + 2, D + 11);

describe('archive-retention', () => {
  it('reads a day partition by its name, as migration 0006 spells it', () => {
    expect(partitionDay('job_history_p20261207')).toBe(D);
    expect(partitionDay('job_history_p20261207_old')).toBeUndefined();
    expect(partitionDay('job_history')).toBeUndefined();
  });

  it('passes when the days past retention are gone, those within it kept and the days ahead there', () => {
    const r = checkArchiveRetention(run(HELD), final, bounds);
    expect(r.pass).toBe(true);
    // D and D + 1 past retention; D + 2 .. D + 11 within it (D + 9 .. D + 11 also ahead).
    expect(r.judged).toEqual({ n: 12, what: 'day partitions (past retention, within it, and ahead)' });
    expect(r.figure).toMatch(/2 past retention \(0 still there\), 10 within it \(0 dropped\), 3 from today ahead \(0 missing\); the database clock stepped 9 days/);
  });

  it('fails (negative control) a partition kept past retention: whole days that ended 7 or more days ago', () => {
    const r = checkArchiveRetention(run([name(D + 1), ...HELD]), final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ pastRetentionStillThere: name(D + 1) }]);
  });

  it('fails (negative control) a partition within retention dropped: retention a day short, as the mutant drops it', () => {
    const r = checkArchiveRetention(run(HELD.filter((p) => p !== name(D + 2))), final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ withinRetentionDropped: name(D + 2) }]);
  });

  it('fails (negative control) a day ahead missing: partitionsAheadDays one short', () => {
    const r = checkArchiveRetention(run(HELD.filter((p) => p !== name(D + 11))), final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ withinRetentionDropped: name(D + 11) }, { aheadMissing: name(D + 11) }]);
  });

  it('judges no reading taken while the archiver runs: between its create and its drop a day past retention is there again', () => {
    const history = run(HELD);
    history.splice(6, 0, read(9_000, NOON + 9 * DAY + 9_000, [name(D), name(D + 1), ...HELD]));
    expect(checkArchiveRetention(history, final, bounds).pass).toBe(true);
  });

  it('does not judge a partition at the line when a midnight fell between the pass it knows of and the reading at rest', () => {
    // The last reading known to precede a pass is on day D + 9, the one at rest just after midnight, on D + 10:
    // D + 2 is past retention by the later day and within it by the earlier, so it is not demanded either way.
    const history = run(HELD.filter((p) => p !== name(D + 2)));
    const rest = history.at(-1) as Extract<HistoryEvent, { type: 'archive:partitions' }>;
    history[history.length - 1] = { ...rest, dbTime: (D + 10) * DAY + 5 * 60_000 };
    const r = checkArchiveRetention(history, final, bounds);
    expect(r.pass).toBe(true);
    expect(r.judged.n).toBe(11);
    expect(r.figure).toMatch(/2 past retention \(0 still there\), 9 within it \(0 dropped\), 2 from today ahead/);
  });

  it('is inconclusive with nothing read, no reading at rest, none early enough, or no partition past retention', () => {
    // Through the registry: a check that judged nothing never passes.
    expect(runCheckers(['archive-retention'], [], final)[0].pass).toBe('unknown');
    // The archiver killed, not stopped: its last pass may have stopped between its create and its drop.
    const killed = run(HELD).map((e) => (e.type === 'process:exited' ? exited(e.t, null) : e));
    expect(checkArchiveRetention(killed, final, bounds).figure).toMatch(/never stopped gracefully/);
    expect(checkArchiveRetention(run(HELD).slice(0, -1), final, bounds).figure).toMatch(/no reading of the partitions after the archiver stopped/);
    expect(checkArchiveRetention(run(HELD), final, { ...bounds, intervalMs: 60_000 }).figure).toMatch(/no pass known to follow it/);
    // A step short of retention: nothing had to be dropped; the situation did not happen.
    const short = checkArchiveRetention(run(span(D, D + 5), { stepDays: 3 }), final, bounds);
    expect(short.pass).toBe('unknown');
    expect(short.figure).toMatch(/no partition had passed retention/);
  });
});
