// per-key-limit, tenant-fairness, sequence-order and weighted-share on small hand-written histories, each with a violating one.
import { describe, expect, it } from 'vitest';
import { checkPerKeyLimit } from '../harness/checkers/per-key-limit.ts';
import { checkTenantFairness } from '../harness/checkers/tenant-fairness.ts';
import { checkSequenceOrder } from '../harness/checkers/sequence-order.ts';
import { checkWeightedShare } from '../harness/checkers/weighted-share.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h } from './support/history-builder.ts';

const final = finalState([]);

/** A downstream call of `key` with `keyInFlight` calls of that key open, as harness/runner/downstream.ts records it. */
const call = (t: number, jobId: number, key: string | undefined, keyInFlight: number): HistoryEvent => ({
  t, node: 'downstream', type: 'downstream:call', jobId, attempt: 1, inFlight: keyInFlight, capacity: 100, overloaded: false,
  ...(key === undefined ? {} : { key, keyInFlight }),
});

describe('per-key-limit', () => {
  it('passes keys that reach their cap and never pass it', () => {
    const r = checkPerKeyLimit([call(1, 1, 'noisy', 1), call(2, 2, 'noisy', 2), call(3, 3, 'q1', 1), call(4, 4, 'noisy', 2)], final, { maxInFlightPerKey: 2 });
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 2, what: 'keyed calls made at or over the cap' });
  });

  it('fails (negative control) a key with more calls open than its cap', () => {
    const r = checkPerKeyLimit([call(1, 1, 'noisy', 2), call(2, 2, 'noisy', 3), call(3, 3, 'q1', 1)], final, { maxInFlightPerKey: 2 });
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 2, key: 'noisy', keyInFlight: 3, t: 2 }]);
  });

  it('is unknown when the cap was never reached or no call had a key', () => {
    expect(checkPerKeyLimit([call(1, 1, 'noisy', 1)], final, { maxInFlightPerKey: 2 }).pass).toBe('unknown');
    expect(checkPerKeyLimit([call(1, 1, undefined, 5)], final, { maxInFlightPerKey: 2 }).pass).toBe('unknown');
    expect(checkPerKeyLimit([], final, { maxInFlightPerKey: 2 }).judged.n).toBe(0);
  });
});

/** A first claim of `key`'s job, due at runAt, claimed at dbTime (both database clock). */
const claimed = (jobId: number, key: string, runAt: number, dbTime: number): HistoryEvent => ({
  ...h.claim(dbTime, jobId, 'w1', 1, { runAt, dbTime }),
  fairnessKey: key,
} as HistoryEvent);

describe('tenant-fairness', () => {
  const bounds = { queue: 'default', noisyKey: 'noisy', maxWaitMs: 500 };
  const flood = Array.from({ length: 10 }, (_, i) => claimed(100 + i, 'noisy', 0, 1_000 + i * 100));

  it('passes quiet tenants claimed within the bound while the noisy one floods', () => {
    const r = checkTenantFairness([...flood, claimed(1, 'q1', 1_100, 1_300), claimed(2, 'q2', 1_400, 1_850)], final, bounds);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 2, what: "quiet tenants' jobs due while noisy flooded" });
  });

  it('fails (negative control) a quiet job that waited behind the flood', () => {
    const r = checkTenantFairness([...flood, claimed(1, 'q1', 1_000, 1_850)], final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 1, key: 'q1', waitMs: 850, t: 1_850 }]);
  });

  it('fails (negative control) quiet jobs due during the flood but served only after it, in plain due order', () => {
    const r = checkTenantFairness([...flood, claimed(1, 'q1', 1_200, 2_500), claimed(2, 'q2', 1_300, 2_510)], final, bounds);
    expect(r.pass).toBe(false);
    expect(r.judged.n).toBe(2);
  });

  it('judges first claims of jobs due inside the flood, and is unknown without one', () => {
    // A retry (attempt 2) of a quiet job does not count as its wait; a quiet job due after the flood is not judged.
    const retry = { ...claimed(1, 'q1', 1_000, 1_850), attempt: 2 } as HistoryEvent;
    const r = checkTenantFairness([...flood, claimed(1, 'q1', 1_000, 1_100), retry, claimed(3, 'q1', 3_000, 5_000)], final, bounds);
    expect(r.pass).toBe(true);
    expect(r.judged.n).toBe(1);
    expect(checkTenantFairness([claimed(1, 'q1', 0, 5_000)], final, bounds).pass).toBe('unknown');
  });
});

describe('sequence-order', () => {
  const bounds = { queue: 'accounts', visibleMs: 250 };
  const ok = (jobId: number, runAt: number): HistoryEvent => ({ ...h.ok(runAt, jobId, jobId, 'accounts', { runAt }), fairnessKey: 'acct' } as HistoryEvent);
  const claimOf = (jobId: number, dbTime: number, attempt = 1): HistoryEvent => ({
    ...h.claim(dbTime, jobId, 'w1', attempt, { queue: 'accounts', dbTime }),
    fairnessKey: 'acct',
  } as HistoryEvent);

  it("passes a key's jobs claimed in order, a retry of the first before the second", () => {
    const r = checkSequenceOrder([ok(1, 0), ok(2, 10), ok(3, 20), claimOf(1, 1_000), claimOf(1, 1_800, 2), claimOf(2, 2_000), claimOf(3, 2_100)], final, bounds);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 2, what: "pairs of one key's consecutive jobs" });
  });

  it('fails (negative control) a next job started while the one before it waited to rerun after a kill', () => {
    const r = checkSequenceOrder([ok(1, 0), ok(2, 10), claimOf(1, 1_000), claimOf(2, 1_500), claimOf(1, 3_000, 2)], final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ key: 'acct', earlier: 1, later: 2, earlierClaimedAt: 3_000, laterFirstClaimedAt: 1_500 }]);
  });

  it("judges the later job's claim by when it took the row, not when its statement began", () => {
    // Job 2's claim began at 1,799 (before job 1's rerun claim at 1,800), waited on the queue's lock while job 1
    // reran and finished, then took job 2 at 1,805: a correct run, as a loaded CI machine recorded one.
    const took = (jobId: number, dbTime: number, takenAt: number): HistoryEvent => ({ ...claimOf(jobId, dbTime), takenAt } as HistoryEvent);
    const waited = [ok(1, 0), ok(2, 10), claimOf(1, 1_000), claimOf(1, 1_800, 2), took(2, 1_799, 1_805)];
    expect(checkSequenceOrder(waited, final, bounds).pass).toBe(true);
    // Negative control: the same claim taking job 2 before job 1's rerun began.
    const r = checkSequenceOrder([ok(1, 0), ok(2, 10), claimOf(1, 1_000), claimOf(1, 1_800, 2), took(2, 1_500, 1_500)], final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ key: 'acct', earlier: 1, later: 2, earlierClaimedAt: 1_800, laterFirstClaimedAt: 1_500 }]);
  });

  it('fails two calls of one key open at once', () => {
    const overlap: HistoryEvent = { ...call(1_100, 2, 'accounts/acct', 2) };
    const r = checkSequenceOrder([ok(1, 0), ok(2, 10), claimOf(1, 1_000), claimOf(2, 1_050), overlap], final, bounds);
    expect(r.pass).toBe(false);
  });

  it('does not judge a job inserted too close to the later claim to have been visible, and is unknown without pairs', () => {
    // Job 1 was inserted 100 ms before job 2's claim: perhaps not yet committed, so no order is owed.
    expect(checkSequenceOrder([ok(1, 1_400), ok(2, 10), claimOf(2, 1_500), claimOf(1, 1_600)], final, bounds).pass).toBe('unknown');
    expect(checkSequenceOrder([ok(1, 0), claimOf(1, 1_000)], final, bounds).judged.n).toBe(0);
  });
});

describe('weighted-share', () => {
  const bounds = { queue: 'default', weights: ['gold:3', 'basic:1'], windowStarts: 8, tolerance: 0.15 };
  /** `pattern` repeated: one claim per letter (g: gold, b: basic, t: an unweighted trickle key), 10 ms apart, all due at 0. */
  const starts = (pattern: string, times: number) =>
    pattern.repeat(times).split('').map((c, i) => claimed(i + 1, c === 'g' ? 'gold' : c === 'b' ? 'basic' : 'trickle', 0, 10 * (i + 1)));

  it("passes keys that take their weight's share of every window while both wait", () => {
    const r = checkWeightedShare([...starts('gggtb', 8), claimed(99, 'basic', 0, 10_000)], final, bounds);
    expect(r.pass).toBe(true);
    // 32 weighted starts, the last basic one after gold's last claim (gold no longer waiting): 3 full windows.
    expect(r.judged.n).toBe(3);
  });

  it('fails (negative control) a light key held back while both wait, and leaves out suspects\' reruns', () => {
    const held = [...starts('ggggggggb', 4), claimed(99, 'basic', 0, 10_000)];
    const r = checkWeightedShare(held, final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples?.[0]).toMatchObject({ window: 1, key: 'gold', starts: 8, expected: 6 });
    // The same starts as reruns of crashed jobs: not the fair pick's, nothing judged.
    const reruns = held.map((e) => ({ ...e, crashCount: 1 }) as HistoryEvent);
    expect(checkWeightedShare(reruns, final, bounds).pass).toBe('unknown');
  });

  it('is unknown when the weighted keys never all waited for a full window', () => {
    expect(checkWeightedShare(starts('g', 20), final, bounds).pass).toBe('unknown');
    expect(() => checkWeightedShare([], final, { ...bounds, weights: ['gold'] })).toThrow(/key:weight/);
  });
});
