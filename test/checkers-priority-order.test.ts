// priority-order on small hand-written histories: a claim that took a worse effective priority while a better
// job waited fails; aging, visibility and concurrent claims are allowed for.
import { describe, expect, it } from 'vitest';
import { checkPriorityOrder } from '../harness/checkers/priority-order.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h } from './support/history-builder.ts';

const bounds = { visibleAfterMs: 250, concurrentMs: 10 };
const final = finalState([]);
/** Workers w1 and w2, both on queues hi and lo, aging 300 ms a level. */
const fleet: HistoryEvent[] = ['w1', 'w2'].map((workerId) => {
  const s = h.settings(0, workerId) as Extract<HistoryEvent, { type: 'worker:settings' }>;
  return { ...s, agingMs: 300, queues: { hi: s.queues.default, lo: s.queues.default } };
});
/** A claim whose statement began at `dbTime` and was reported `tookMs` later (the worker's clock, same host). */
const claim = (jobId: number, workerId: string, dbTime: number, priority: number, runAt: number, tookMs = 5) =>
  h.claim(dbTime, jobId, workerId, 1, { dbTime, nodeTime: dbTime + tookMs, runAt, priority, queue: priority > 0 ? 'hi' : 'lo' });

describe('priority-order', () => {
  it('passes when each claim took the best score, a low job overtaking once it has aged (9 - 0) x 300 ms', () => {
    const history = [
      ...fleet,
      // At 10,000: high job 1 (due 9,000) beats low job 2 (due 7,000: 2 s older, less than 2.7 s).
      claim(1, 'w1', 10_000, 9, 9_000),
      // At 10,500: low job 2 (due 7,000) beats high job 3 (due 9,800): 2.8 s older, more than 2.7 s.
      claim(2, 'w1', 10_500, 0, 7_000),
      claim(3, 'w1', 11_000, 9, 9_800),
    ];
    const r = checkPriorityOrder(history, final, bounds);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 2, what: 'claims made while a job of another priority waited' });
  });

  it('fails (negative control) when a claim took a low job while a better high one waited', () => {
    const history = [...fleet, claim(2, 'w1', 10_000, 0, 9_000), claim(1, 'w1', 10_500, 9, 9_500)];
    const r = checkPriorityOrder(history, final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([
      { claimedAt: 10_000, workerId: 'w1', took: { jobId: 2, priority: 0, runAt: 9_000 }, passedOver: { jobId: 1, priority: 9, runAt: 9_500, claimedAt: 10_500 }, betterByMs: 2_200 },
    ]);
  });

  it('judges at claim time: a job claimed ahead was the best when it was claimed, whenever it started', () => {
    // Low job 2 claimed (ahead) at 10,000 when nothing better was due; high job 1 became due after that claim.
    const history = [...fleet, claim(2, 'w1', 10_000, 0, 9_000), claim(1, 'w1', 10_400, 9, 10_100)];
    expect(checkPriorityOrder(history, final, bounds).pass).toBe('unknown');
  });

  it('excuses what the claim cannot see: a row due within visibleAfterMs, or locked by a claim beside it', () => {
    const history = [
      ...fleet,
      // Job 1 due 100 ms before the claim: its enqueue may not have committed yet.
      claim(2, 'w1', 10_000, 0, 9_000),
      claim(1, 'w1', 10_300, 9, 9_900),
      // Job 3 taken by w2's claim that began 20 ms later, while w1's (40 ms long) still ran: locked by it.
      claim(4, 'w1', 20_000, 0, 19_000, 40),
      claim(3, 'w2', 20_020, 9, 19_000),
    ];
    expect(checkPriorityOrder(history, final, bounds).pass).toBe(true);
  });

  it("excuses rows outside the claim's candidates (its lane's 2 x claimed oldest, locked ones counted), not those inside", () => {
    const history = [
      ...fleet,
      // w2's claim beside w1's took the high lane's two oldest jobs (10, 11); w1 took one job, low job 2.
      claim(10, 'w2', 20_000, 9, 18_000),
      claim(11, 'w2', 20_000, 9, 18_100),
      claim(2, 'w1', 20_002, 0, 19_000),
      // High jobs 12 and 13 come next: outside w1's 2 x 1 candidates. A free high job 5, older than all of them, was
      // not: w1 passed it over, and so did w2 (for 10 and 11) and w1's next claim (for 12 and 13).
      claim(12, 'w1', 20_500, 9, 18_200),
      claim(13, 'w1', 20_500, 9, 18_300),
      claim(5, 'w1', 20_600, 9, 17_000),
    ];
    const r = checkPriorityOrder(history, final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples?.map((e) => (e as { workerId: string; passedOver: { jobId: number } })).map((e) => [e.workerId, e.passedOver.jobId])).toEqual([
      ['w2', 5],
      ['w1', 5],
      ['w1', 5],
    ]);
  });

  it("leaves out suspects and jobs of queues the claiming worker does not serve", () => {
    const only = { ...(fleet[0] as Extract<HistoryEvent, { type: 'worker:settings' }>), workerId: 'w3', node: 'w3', queues: { lo: fleet[0].type === 'worker:settings' ? fleet[0].queues.lo : ({} as never) } };
    const history: HistoryEvent[] = [
      ...fleet,
      only,
      claim(2, 'w3', 10_000, 0, 9_000),
      claim(1, 'w1', 10_500, 9, 9_000),
      h.claim(11_000, 5, 'w1', 2, { dbTime: 11_000, runAt: 5_000, priority: 9, queue: 'hi', crashCount: 1 }),
    ];
    expect(checkPriorityOrder(history, final, bounds).pass).toBe('unknown');
  });
});
