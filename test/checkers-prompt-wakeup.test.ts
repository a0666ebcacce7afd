import { describe, expect, it } from 'vitest';
import { checkPromptWakeup } from '../harness/checkers/prompt-wakeup.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h } from './support/history-builder.ts';

// A quiet fleet: w1 and w2 listen from t=0; job n is enqueued at 3 s intervals (due at once, run_at = its ack time)
// and claimed `waitMs` later on the database clock (here the same numbers as t).
const bounds = { maxStartMs: 1_000, relistenMs: 5_000, settleMs: 2_000, pollMs: 10_000, minJudged: 10 };
const trickle = (waitMs: (n: number) => number, count = 12): HistoryEvent[] =>
  Array.from({ length: count }, (_, i) => {
    const n = i + 1;
    const at = n * 3_000;
    return [h.ok(at, n, n), h.claim(at + waitMs(n), n, n % 2 ? 'w1' : 'w2', 1, { runAt: at, dbTime: at + waitMs(n) })];
  }).flat();
const listening = [h.listening(0, 'w1'), h.listening(0, 'w2')];
const check = (history: HistoryEvent[], b = bounds) => checkPromptWakeup(history, finalState([]), b);

describe('prompt-wakeup', () => {
  it('passes when every job due while a worker listens is claimed within the bound, and workers listen again after a cut', () => {
    const r = check([...listening, ...trickle(() => 8), h.fault(16_500, 'db-terminate-backends'), h.listening(16_620, 'w1'), h.listening(16_640, 'w2')]);
    expect(r.pass).toBe(true);
    // The job due 1.5 s after the cut (n=6, at 18 s) is the fault's, not judged.
    expect(r.figure).toBe('0 of 11 jobs due while a worker listened waited over the bound (due to claim p50 8 ms, p99 8 ms, max 8 ms; poll 10,000 ms); 1 severing faults: every worker listened again within 140 ms');
    expect(r.judged).toEqual({ n: 11, what: 'jobs due while a worker listened' });
  });

  it('fails (negative control) when jobs wait for a later look instead of a wake-up', () => {
    const r = check([...listening, ...trickle((n) => (n % 3 === 0 ? 2_110 : 8))]);
    expect(r.pass).toBe(false);
    expect(r.figure).toMatch(/^4 of 12 jobs due while a worker listened waited over the bound/);
    expect(r.examples).toContainEqual({ jobId: 3, dueAtT: 9_000, waitedMs: 2_110, claimedBy: 'w1' });
  });

  it('fails when a worker does not listen again after its connections were cut, unless its process died', () => {
    const deaf = check([...listening, ...trickle(() => 8), h.fault(16_500, 'db-terminate-backends'), h.listening(16_620, 'w1')]);
    expect(deaf.pass).toBe(false);
    expect(deaf.examples).toContainEqual({ workerId: 'w2', fault: 'db-terminate-backends', faultAtT: 16_500, listenedAgainAfterMs: null });
    const died = check([...listening, ...trickle(() => 8), h.fault(16_500, 'db-terminate-backends'), h.listening(16_620, 'w1'), h.exited(17_000, 'w2')]);
    expect(died.pass).toBe(true);
    // A worker killed long before the cut, and its successor listening in its place, ask nothing either.
    const replaced = [h.listening(0, 'w1.1', 'w1'), h.listening(0, 'w2'), h.exited(4_000, 'w1'), h.listening(4_500, 'w1.2', 'w1')];
    const restarted = check([...replaced, ...trickle(() => 8), h.fault(16_500, 'db-terminate-backends'), h.listening(16_620, 'w1.2', 'w1'), h.listening(16_640, 'w2')]);
    expect(restarted.pass).toBe(true);
    // A fault that cuts no connection (a worker freeze) asks nothing of the listeners.
    expect(check([...listening, ...trickle(() => 8), h.fault(16_500, 'worker-stop')]).pass).toBe(true);
  });

  it('jobs enqueued before any worker listened, delayed jobs and jobs due around a fault are not judged', () => {
    const history = [...trickle(() => 5_000, 2), ...listening.map((e) => ({ ...e, t: 7_000 })), ...trickle(() => 8).slice(4)];
    expect(check(history).figure).toMatch(/^0 of 10 jobs/);
    const delayed = { ...h.ok(40_000, 99, 99), delayMs: 60_000 } as HistoryEvent;
    expect(check([...listening, ...trickle(() => 8), delayed, h.claim(100_000, 99, 'w1', 1, { runAt: 100_000, dbTime: 100_000 })]).figure).toMatch(/^0 of 12 jobs/);
  });

  it('is inconclusive when the poll alone meets the bound, or too few jobs were judged', () => {
    const short = check([...listening, ...trickle(() => 8)], { ...bounds, pollMs: 1_500 });
    expect(short.pass).toBe('unknown');
    expect(short.figure).toContain('inconclusive: a poll of 1,500 ms meets the bound without any wake-up');
    const few = check([...listening, ...trickle(() => 8, 5)]);
    expect(few.pass).toBe('unknown');
    expect(few.figure).toContain('inconclusive: fewer than 10 jobs to judge');
  });
});
