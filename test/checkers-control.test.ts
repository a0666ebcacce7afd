import { describe, expect, it } from 'vitest';
import { checkDownstreamInFlight } from '../harness/checkers/downstream-in-flight.ts';
import { checkPausedQueueIdle, pausedIntervals } from '../harness/checkers/paused-queue-idle.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h } from './support/history-builder.ts';

const call = (t: number, jobId: number, inFlight: number, overloaded = false): HistoryEvent => ({
  t, node: 'downstream', type: 'downstream:call', jobId, attempt: 1, inFlight, capacity: 4, overloaded,
});
const paused = (t: number, dbTime: number, queue = 'default'): HistoryEvent => ({ t, node: 'nemesis', type: 'queue:paused', queue, by: 'nemesis', dbTime });
const resumed = (t: number, dbTime: number, queue = 'default'): HistoryEvent => ({ t, node: 'nemesis', type: 'queue:resumed', queue, by: 'nemesis', dbTime });

describe('downstream-in-flight', () => {
  it('passes when the calls reach the limit and never pass it', () => {
    const r = checkDownstreamInFlight([call(1, 1, 1), call(2, 2, 2), call(3, 3, 2), call(4, 4, 1)], finalState([]), { maxInFlight: 2 });
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('peak 2 calls at once over 4 calls; 0 above the limit, 0 refused as overload (capacity 4)');
    // Only the two calls made at the limit could have gone over it.
    expect(r.judged).toEqual({ n: 2, what: 'calls at or over the limit' });
  });

  it('fails (negative control) when the downstream saw more at once than the limit, as claims without the limit allow', () => {
    const r = checkDownstreamInFlight([call(1, 1, 1), call(2, 2, 2), call(3, 3, 3), call(4, 4, 5, true)], finalState([]), { maxInFlight: 2 });
    expect(r.pass).toBe(false);
    expect(r.figure).toMatch(/^peak 5 calls at once over 4 calls; 2 above the limit, 1 refused as overload/);
    expect(r.examples).toEqual([{ jobId: 3, attempt: 1, inFlight: 3, t: 3 }, { jobId: 4, attempt: 1, inFlight: 5, t: 4 }]);
  });

  it('is inconclusive with no calls, or when the load never reached the limit', () => {
    expect(checkDownstreamInFlight([], finalState([]), { maxInFlight: 2 }).pass).toBe('unknown');
    const underLimit = checkDownstreamInFlight([call(1, 1, 1), call(5, 2, 1)], finalState([]), { maxInFlight: 2 });
    expect(underLimit.pass).toBe('unknown');
    expect(underLimit.judged.n).toBe(0);
  });
});

describe('paused-queue-idle', () => {
  const claimAt = (t: number, jobId: number, dbTime: number, queue = 'default') => h.claim(t, jobId, 'w1', 1, { dbTime, queue });

  it('passes when the queue claims before the pause and after the resume only, other queues carrying on', () => {
    const history = [claimAt(1, 1, 1_000), paused(2, 2_000), claimAt(3, 2, 2_500, 'other'), resumed(4, 5_000), claimAt(5, 3, 5_010)];
    const r = checkPausedQueueIdle(history, finalState([]), { resumeSlackMs: 50 });
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 claims while paused (1 pauses, 3 s); 2 claims of the paused queues in all');
    expect(r.judged).toEqual({ n: 2, what: 'claims of paused queues' });
  });

  it('fails (negative control) when a claim of the queue began while it was paused', () => {
    const history = [paused(1, 2_000), claimAt(2, 7, 3_000), resumed(3, 5_000)];
    const r = checkPausedQueueIdle(history, finalState([]), { resumeSlackMs: 50 });
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 7, queue: 'default', dbTime: 3_000 }]);
  });

  it('fails for a claim after a pause that was never resumed; excuses one that began just before the resume', () => {
    expect(checkPausedQueueIdle([paused(1, 2_000), claimAt(2, 1, 9_000)], finalState([]), { resumeSlackMs: 50 }).pass).toBe(false);
    expect(checkPausedQueueIdle([paused(1, 2_000), claimAt(2, 1, 4_970), resumed(3, 5_000)], finalState([]), { resumeSlackMs: 50 }).pass).toBe(true);
  });

  it('is inconclusive without a pause, or when the paused queue never ran anything', () => {
    expect(checkPausedQueueIdle([claimAt(1, 1, 1_000)], finalState([]), { resumeSlackMs: 50 }).pass).toBe('unknown');
    expect(checkPausedQueueIdle([paused(1, 2_000), resumed(2, 3_000)], finalState([]), { resumeSlackMs: 50 }).pass).toBe('unknown');
  });

  it('pairs each pause with the next resume of the same queue', () => {
    const history = [paused(1, 10, 'a'), paused(2, 20, 'b'), resumed(3, 30, 'a'), paused(4, 40, 'a'), resumed(5, 50, 'b')];
    expect(pausedIntervals(history)).toEqual([
      { queue: 'a', fromDb: 10, toDb: 30 },
      { queue: 'b', fromDb: 20, toDb: 50 },
      { queue: 'a', fromDb: 40, toDb: Infinity },
    ]);
  });
});
