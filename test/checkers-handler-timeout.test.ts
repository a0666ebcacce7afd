// handler-timeout (Worker.timeoutMs) on small hand-written histories: what it
// judges, and each way a limit can be broken (its negative controls).
import { describe, expect, it } from 'vitest';
import { checkHandlerTimeout } from '../harness/checkers/handler-timeout.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h } from './support/history-builder.ts';

const bounds = { timeoutMs: 1_000, lagMs: 250, slackMs: 1_000 };
const TIMEOUT = 'JobTimeoutError: handler exceeded its timeout of 1000 ms';

/** Worker w1 with a 1 s limit; job 1 timed out (recorded 30 ms past it), job 2 finished well within it. */
const good: HistoryEvent[] = [
  h.settings(0, 'w1', { timeoutMs: 1_000 }),
  h.claim(10, 1, 'w1'),
  h.started(10, 1, 'w1'),
  h.failed(1_040, 1, 'w1', 1, { error: TIMEOUT, durationMs: 1_002, nodeTime: 1_040 }),
  h.claim(20, 2, 'w1'),
  h.started(20, 2, 'w1'),
  h.completed(500, 2, 'w1', 1, 480),
];

describe('handler-timeout', () => {
  it('passes, judging the attempts that reached the limit, when each failed with JobTimeoutError in time', () => {
    const r = checkHandlerTimeout(good, finalState([]), bounds);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 1, what: 'attempts that reached their handler timeout' });
    expect(r.figure).toBe('1 attempts reached their handler timeout: 1 failed with JobTimeoutError (recorded at most 30 ms past the limit), 0 ran past it; 0 violations');
  });

  it('is unknown when no handler reached its limit', () => {
    const r = checkHandlerTimeout(good.filter((e) => e.type !== 'job:failed'), finalState([]), bounds);
    expect(r.pass).toBe('unknown');
    expect(r.judged?.n).toBe(0);
  });

  it('fails (negative control) on a handler that ran to completion past its limit: the timer never fired', () => {
    const r = checkHandlerTimeout([...good, h.claim(30, 3, 'w1'), h.started(30, 3, 'w1'), h.completed(1_900, 3, 'w1', 1, 1_800)], finalState([]), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ what: 'ran to completion past its timeout', jobId: 3, attempt: 1, workerId: 'w1', durationMs: 1_800, timeoutMs: 1_000 }]);
  });

  it('allows a timeout measured a millisecond short of its limit (the timer and the clock are whole milliseconds)', () => {
    const grain = [h.claim(30, 3, 'w1'), h.started(30, 3, 'w1'), h.failed(1_040, 3, 'w1', 1, { error: TIMEOUT, durationMs: 999, nodeTime: 1_040 })];
    expect(checkHandlerTimeout([...good, ...grain], finalState([]), bounds).pass).toBe(true);
  });

  it('allows a completion that settled within the lag of its limit (the timer and the handler raced)', () => {
    const r = checkHandlerTimeout([...good, h.claim(30, 3, 'w1'), h.started(30, 3, 'w1'), h.completed(1_100, 3, 'w1', 1, 1_100)], finalState([]), bounds);
    expect(r.pass).toBe(true);
    expect(r.judged?.n).toBe(2);
  });

  it('fails on a timeout that fired early, one recorded late, and one on a queue without a limit', () => {
    const early = [h.claim(30, 3, 'w1'), h.started(30, 3, 'w1'), h.failed(700, 3, 'w1', 1, { error: TIMEOUT, durationMs: 600, nodeTime: 700 })];
    const late = [h.claim(40, 4, 'w1'), h.started(40, 4, 'w1'), h.failed(2_500, 4, 'w1', 1, { error: TIMEOUT, durationMs: 1_001, nodeTime: 2_500 })];
    const r = checkHandlerTimeout([...good, ...early, ...late], finalState([]), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples!.map((e) => (e as { what: string }).what)).toEqual(['timed out before its limit', 'timeout recorded late']);
    const none = [h.settings(0, 'w2', { timeoutMs: null }), h.claim(30, 5, 'w2'), h.failed(1_100, 5, 'w2', 1, { error: TIMEOUT, durationMs: 1_000 })];
    const r2 = checkHandlerTimeout(none, finalState([]), { ...bounds, timeoutMs: 0 });
    expect(r2.pass).toBe(false);
    expect(r2.examples).toEqual([{ what: 'timed out on a queue without a timeout', jobId: 5, attempt: 1, workerId: 'w2' }]);
  });

  it("fails when a worker reports another limit than the scenario's, or failed past it with the handler's own error", () => {
    const r = checkHandlerTimeout([h.settings(0, 'w2', { timeoutMs: null }), ...good], finalState([]), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples![0]).toEqual({ what: 'worker reports another timeout than the scenario set', workerId: 'w2', queue: 'default', reported: null, expected: 1_000 });
    const own = [h.claim(30, 3, 'w1'), h.started(30, 3, 'w1'), h.failed(1_600, 3, 'w1', 1, { error: 'Error: boom', durationMs: 1_500 })];
    const r2 = checkHandlerTimeout([...good, ...own], finalState([]), bounds);
    expect(r2.pass).toBe(false);
    expect((r2.examples![0] as { what: string }).what).toBe('failed past its timeout with another error');
  });
});
