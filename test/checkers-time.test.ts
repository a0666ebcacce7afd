import { describe, expect, it } from 'vitest';
import { SeededRng } from '../engine/rng.ts';
import { retryDelayMs } from '../engine/worker/backoff.ts';
import { ceilingDelayMs } from '../harness/mutants/no-jitter.ts';
import { checkFairness } from '../harness/checkers/fairness.ts';
import { checkOldestAgeSlo } from '../harness/checkers/oldest-age-slo.ts';
import { checkRetrySpread, outageWindows } from '../harness/checkers/retry-spread.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h, job } from './support/history-builder.ts';

describe('fairness', () => {
  const bounds = { maxLowWaitMs: 1_000, lowQueues: [], highQueues: [], maxLowOverHighMs: Number.MAX_SAFE_INTEGER };
  // Due-to-start wait = claim dbTime - runAt (+ generator lateness on attempt 1).
  const claims = (lowWait: number): HistoryEvent[] => [
    h.claim(1, 1, 'w1', 1, { priority: 9, runAt: 1_000, dbTime: 1_010 }),
    h.claim(2, 2, 'w1', 1, { priority: 9, runAt: 1_000, dbTime: 1_030 }),
    h.claim(3, 3, 'w2', 1, { priority: 0, runAt: 1_000, dbTime: 1_000 + lowWait }),
    h.claim(4, 4, 'w2', 1, { priority: 0, runAt: 1_000, dbTime: 1_200 }),
  ];

  it('passes when the low lane waits within its bound, and reports both medians', () => {
    const r = checkFairness(claims(900), finalState([]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('low-lane max wait 900 ms over 2 claims, 0 never claimed; median wait high 10 ms vs low 200 ms (low priority 0, high priority 9)');
    expect(r.bound).toBe('low-lane max wait <= 1,000 ms');
    expect(r.judged).toEqual({ n: 2, what: 'low-lane claims' });
  });

  it('judges nothing when every claim had one priority: there was no low lane to starve', () => {
    const oneLane = claims(900).map((e) => (e.type === 'job:claimed' ? { ...e, priority: 0 } : e));
    const r = checkFairness(oneLane, finalState([]), bounds);
    expect(r.pass).toBe('unknown');
    expect(r.judged.n).toBe(0);
  });

  it('fails (negative control) when a low-lane job waited past the bound, as under pure priority', () => {
    const r = checkFairness(claims(5_000), finalState([]), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 3, queue: 'default', attempt: 1, waitMs: 5_000 }]);
  });

  it("adds the generator's lateness to a first attempt, so a stalled offer cannot hide the wait", () => {
    const history = [h.ok(0, 3, 3, 'low', { intendedAt: 0, sentAt: 800 }), h.claim(1, 3, 'w', 1, { queue: 'low', runAt: 1_000, dbTime: 1_300 }), h.claim(2, 4, 'w', 1, { queue: 'high', runAt: 1_000, dbTime: 1_000 })];
    const r = checkFairness(history, finalState([]), { ...bounds, lowQueues: ['low'] });
    expect(r.pass).toBe(false);
    expect(r.figure).toMatch(/^low-lane max wait 1,100 ms/);
  });

  it('does not count what a database clock step skipped as waiting; the same claims without the step record fail', () => {
    const HOUR = 3_600_000;
    // Due 10 min after the clock read 1,000, claimed 300 ms after it stepped an hour; and one due before the step.
    const stepped: HistoryEvent[] = [
      h.fault(5, 'db-clock-jump', { jumpMs: HOUR, dbBeforeMs: 1_000, dbAfterMs: 1_000 + HOUR }),
      h.claim(6, 3, 'w', 1, { priority: 0, runAt: 1_000 + 600_000, dbTime: 1_000 + HOUR + 300 }),
      h.claim(7, 4, 'w', 1, { priority: 0, runAt: 900, dbTime: 1_000 + HOUR + 400 }),
      h.claim(8, 5, 'w', 1, { priority: 9, runAt: 1_000 + HOUR, dbTime: 1_000 + HOUR + 10 }),
    ];
    const r = checkFairness(stepped, finalState([]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toMatch(/^low-lane max wait 500 ms over 2 claims/);
    expect(checkFairness(stepped.slice(1), finalState([]), bounds).pass).toBe(false);
  });

  it('fails when a low-lane job was never claimed for longer than the bound (starved)', () => {
    const history = [h.ok(0, 5, 5, 'low'), h.claim(100, 6, 'w', 1, { queue: 'low', runAt: 0, dbTime: 10 }), h.sample(5_000, {})];
    const r = checkFairness(history, finalState([job(5, 'pending', { queue: 'low' }), job(6, 'done', { queue: 'low' })]), { ...bounds, lowQueues: ['low'] });
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 5, queue: 'low', neverClaimedForMs: 5_000 }]);
  });

  it('the relative bound: the low lane may trail the high lane by at most maxLowOverHighMs', () => {
    const relative = { ...bounds, maxLowWaitMs: 60_000, maxLowOverHighMs: 500 };
    const ok = checkFairness(claims(520), finalState([]), relative); // high max 30 ms + 500 ms >= 520 ms
    expect(ok.pass).toBe(true);
    expect(ok.bound).toBe('low-lane max wait <= 60,000 ms and <= high-lane max (30 ms) + 500 ms');
    const behind = checkFairness(claims(600), finalState([]), relative); // the negative control
    expect(behind.pass).toBe(false);
  });

  it('is unknown when the run had only one lane', () => {
    expect(checkFairness([h.claim(1, 1, 'w', 1, { dbTime: 5 })], finalState([]), bounds).pass).toBe('unknown');
  });
});

describe('oldest-age-slo', () => {
  const samples = (ages: number[]) => ages.map((a, i) => h.sample(i * 1_000, { high: a, low: a / 2 }));
  const bounds = { sloMs: 1_000, incident: { fromMs: 3_000, toMs: 5_000 }, maxRecoverMs: 2_000, queues: [] };

  it('passes when the age exceeds the SLO only inside the incident and recovers in time', () => {
    const r = checkOldestAgeSlo(samples([100, 200, 300, 9_000, 12_000, 4_000, 800, 200]), finalState([]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('p99 800 ms, max 800 ms over 5 samples outside the incident; peak 12,000 ms in the incident (3,000-5,000 ms); recovered 1,000 ms after it');
    expect(r.judged).toEqual({ n: 5, what: 'samples outside the incident' });
    expect(r.bound).toBe('p99 and max <= 1,000 ms outside the incident; recovery <= 2,000 ms');
  });

  it('a run that ends inside its incident window counts as recovered only if it ended under the SLO', () => {
    const short = { ...bounds, incident: { fromMs: 3_000, toMs: 60_000 } };
    const recovered = checkOldestAgeSlo(samples([100, 200, 300, 9_000, 4_000, 500]), finalState([]), short);
    expect(recovered.pass).toBe(true);
    expect(recovered.figure).toMatch(/back under the SLO when the run ended at 5,000 ms, inside it$/);
    const stuck = checkOldestAgeSlo(samples([100, 200, 300, 9_000, 4_000, 3_000]), finalState([]), short); // the negative control
    expect(stuck.pass).toBe(false);
    expect(stuck.figure).toMatch(/never recovered$/);
  });

  it('fails (negative control) when the age breaks the SLO outside the incident', () => {
    const r = checkOldestAgeSlo(samples([100, 3_000, 300, 400]), finalState([]), { ...bounds, incident: null });
    expect(r.pass).toBe(false);
    expect(r.figure).toBe('p99 3,000 ms, max 3,000 ms over 4 samples outside the incident');
  });

  it('fails when recovery takes longer than its bound, or never comes', () => {
    const slow = checkOldestAgeSlo(samples([100, 100, 100, 9_000, 9_000, 9_000, 9_000, 9_000, 500]), finalState([]), bounds);
    expect(slow.pass).toBe(false);
    expect(slow.figure).toMatch(/recovered 3,000 ms after it$/);
    const never = checkOldestAgeSlo(samples([100, 100, 100, 9_000, 9_000, 9_000]), finalState([]), bounds);
    expect(never.pass).toBe(false);
    expect(never.figure).toMatch(/never recovered$/);
  });

  it('watches only the named queues when asked, and is unknown without samples', () => {
    const r = checkOldestAgeSlo([h.sample(0, { high: 5_000, low: 10 })], finalState([]), { ...bounds, incident: null, queues: ['low'] });
    expect(r.pass).toBe(true);
    expect(checkOldestAgeSlo([], finalState([]), bounds).pass).toBe('unknown');
  });
});

describe('retry-spread', () => {
  /**
   * 200 jobs fail together when a 10 s outage starts at 10 s, then retry with
   * the engine's backoff (base 1 s, cap 5 min) and fail again until the outage
   * is over: with full jitter each wait is random(0, ceiling), without it (the
   * no-jitter mutant) the ceiling. `spreadMs` is how long the burst takes to
   * fail: a slow machine fails it over seconds, not all at once.
   */
  function outageHistory(jitter: boolean, seed = 7, spreadMs = 100): HistoryEvent[] {
    const rng = new SeededRng(seed);
    const events: HistoryEvent[] = [h.fault(10_000, 'dependency-outage', { durationMs: 10_000 })];
    for (let id = 1; id <= 200; id++) {
      let t = 10_000 + Math.round(rng.next() * spreadMs);
      for (let attempt = 1; t < 20_000; attempt++) {
        // The engine's own retry policy, or exactly what the no-jitter mutant does instead.
        const retryAt = t + (jitter ? retryDelayMs : ceilingDelayMs)(attempt, { baseMs: 1_000, capMs: 300_000 }, rng);
        events.push(h.failed(t, id, 'w', attempt, { dbTime: t, retryAt }));
        t = retryAt + 5;
      }
    }
    return events.sort((a, b) => a.t - b.t);
  }
  const bounds = { maxCohortShare: 0.5, bucketMs: 200, afterMs: 60_000, minCohort: 5, minRetries: 20 };

  it('passes with full jitter, however fast the burst failed', () => {
    for (const [seed, spreadMs] of [[1, 100], [2, 100], [3, 3_000]]) {
      const r = checkRetrySpread(outageHistory(true, seed, spreadMs), finalState([]), bounds);
      expect(r.pass, r.figure).toBe(true);
    }
    expect(checkRetrySpread(outageHistory(true), finalState([]), bounds).figure).toMatch(
      /^\d+ of \d+ retries \(\d+(\.\d)? %\) came due within 200 ms of their cohort \(\d+ cohorts/,
    );
  });

  it('fails (negative control) with fixed intervals, also when a slow machine spread the burst over seconds', () => {
    for (const spreadMs of [100, 3_000]) {
      const r = checkRetrySpread(outageHistory(false, 7, spreadMs), finalState([]), bounds);
      expect(r.pass, r.figure).toBe(false);
      expect(r.figure).toMatch(/\(100 %\) came due within 200 ms of their cohort/);
    }
    expect(checkRetrySpread(outageHistory(false), finalState([]), bounds).bound).toBe("<= 50 % of a cohort's retries due within 200 ms");
  });

  it('does not judge a failure that dead-lettered its job, nor one without the database time', () => {
    const lockstep = outageHistory(false).filter((e) => e.type !== 'job:failed' || e.attempt === 1);
    const dead = lockstep.flatMap((e) => (e.type === 'job:failed' ? [e, h.dead(e.t, e.jobId, e.attempt)] : [e]));
    const judged = checkRetrySpread(lockstep, finalState([]), bounds);
    expect(judged.pass).toBe(false);
    // The 200 first failures, one cohort: each retry could have come due apart from the others.
    expect(judged.judged).toEqual({ n: 200, what: 'retries in cohorts after an outage' });
    const none = checkRetrySpread(dead, finalState([]), bounds);
    expect(none.pass).toBe('unknown');
    expect(none.judged.n).toBe(0);
    const undated = lockstep.map((e) => (e.type === 'job:failed' ? { ...e, dbTime: undefined } : e));
    expect(checkRetrySpread(undated, finalState([]), bounds).pass).toBe('unknown');
  });

  it('is unknown without an outage or with too few retries to judge', () => {
    const one = h.failed(1, 1, 'w', 1, { dbTime: 1, retryAt: 1_000 });
    expect(checkRetrySpread([one], finalState([]), bounds).pass).toBe('unknown');
    expect(checkRetrySpread([h.fault(0, 'dependency-outage', { durationMs: 5 }), one], finalState([]), bounds).pass).toBe('unknown');
  });

  it('reads an outage closed by an end marker, or sized by forS or untilMs', () => {
    expect(outageWindows([h.fault(1_000, 'dependency-outage'), h.fault(4_000, 'dependency-outage', { phase: 'end' })])).toEqual([{ fromMs: 1_000, toMs: 4_000 }]);
    expect(outageWindows([h.fault(1_000, 'dependency-outage', { forS: 2 }), h.fault(9_000, 'dependency-outage', { untilMs: 9_500 })])).toEqual([
      { fromMs: 1_000, toMs: 3_000 },
      { fromMs: 9_000, toMs: 9_500 },
    ]);
  });
});
