import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { fmt, type CheckerDef, type WindowMs } from './types.ts';

export interface RetrySpreadBounds {
  /**
   * Largest share of a cohort's retries that may come due within one
   * `bucketMs` of each other. A cohort is the jobs whose same attempt failed
   * within the same `bucketMs`. Fixed intervals bring a cohort back together,
   * so the share is 100 %. Full jitter spreads it over the whole backoff
   * ceiling. Default 0.5.
   */
  maxCohortShare: number;
  /**
   * Bucket width in ms. Default 1,000. Full jitter spreads a cohort's first
   * retry over the backoff base, so the bucket must be well under the base
   * (a fifth or less) to tell jitter from lockstep. The scenario's bounds
   * resolver picks min(1,000, backoffBaseMs / 5).
   */
  bucketMs: number;
  /** How long after the outage ends its failures still count, in ms. Default 60,000. */
  afterMs: number;
  /** Cohorts smaller than this are too small to judge. Default 5. */
  minCohort: number;
  /** Fewer judged retries than this and the share means nothing: unknown. Default 20. */
  minRetries: number;
}

/** The fault name that marks a shared outage in the history. */
export const OUTAGE_FAULT = 'dependency-outage';

/**
 * Outage windows from `fault:injected` events of the outage fault: from the
 * event's `t` for `detail.durationMs` (or `detail.forS`, as the fault plan
 * declares it), or until `detail.untilMs`, or until a later `fault:injected`
 * of the same fault with `detail.phase: 'end'` (a zero-length window if none).
 */
export function outageWindows(history: readonly HistoryEvent[]): WindowMs[] {
  const windows: WindowMs[] = [];
  for (const e of history) {
    if (e.type !== 'fault:injected' || e.fault !== OUTAGE_FAULT) continue;
    if (e.detail.phase === 'end') {
      const open = [...windows].reverse().find((w) => w.toMs === w.fromMs && w.fromMs <= e.t);
      if (open) open.toMs = e.t;
      continue;
    }
    const { durationMs, forS, untilMs } = e.detail;
    const lengthMs =
      typeof durationMs === 'number' ? durationMs : typeof forS === 'number' ? forS * 1000 : typeof untilMs === 'number' ? untilMs - e.t : 0;
    windows.push({ fromMs: e.t, toMs: e.t + Math.max(0, lengthMs) });
  }
  return windows;
}

/** A failure with the database's time of it (every failure a worker reports carries one). */
type Failure = Extract<HistoryEvent, { type: 'job:failed' }> & { dbTime: number };

/** The most of the sorted `times` that fit in one span of `widthMs`, and where that span starts. */
function densestSpan(times: readonly number[], widthMs: number): { count: number; fromMs: number } {
  let best = { count: 0, fromMs: times[0] };
  for (let lo = 0, hi = 0; hi < times.length; hi++) {
    while (times[hi] - times[lo] >= widthMs) lo++;
    if (hi - lo + 1 > best.count) best = { count: hi - lo + 1, fromMs: times[lo] };
  }
  return best;
}

/**
 * Jobs that failed together must not come back together. After a shared
 * outage, the failures that lead to a retry (not to the dead-letter table)
 * are grouped into cohorts: the same attempt, failed within the same
 * `bucketMs` by the database clock. In each cohort of at least `minCohort`
 * jobs the checker counts the retries that come due (`retryAt`) within the
 * densest `bucketMs`, and holds that count, summed over cohorts, to
 * `maxCohortShare` of their retries. Fixed intervals give 100 %: each cohort
 * returns on one tick to hit the recovering dependency together, and fails
 * together again. Full jitter (wait random(0, ceiling)) spreads each cohort
 * over its whole ceiling. Judging cohorts rather than the whole window keeps
 * the verdict apart from how fast the machine failed the burst: a slow
 * machine spreads the failures, but not the lockstep of each cohort.
 * With several outages the worst window is reported.
 */
export function checkRetrySpread(history: readonly HistoryEvent[], _final: FinalState, bounds: RetrySpreadBounds): InvariantResult {
  const base = {
    name: 'retry-spread',
    bound: `<= ${fmt(bounds.maxCohortShare * 100, 1)} % of a cohort's retries due within ${fmt(bounds.bucketMs)} ms`,
  };
  const what = 'retries in cohorts after an outage';
  const windows = outageWindows(history);
  if (windows.length === 0) return { ...base, pass: 'unknown', figure: `no ${OUTAGE_FAULT} in the history`, judged: { n: 0, what } };

  // A failure that killed the job has no retry to judge.
  const deadAt = new Set(history.filter((e) => e.type === 'job:dead').map((e) => `${e.jobId}:${e.attempt}`));
  const retried = history.filter((e): e is Failure => e.type === 'job:failed' && e.dbTime !== undefined && !deadAt.has(`${e.jobId}:${e.attempt}`));

  let worst: { share: number; together: number; judged: number; cohorts: number; top: { count: number; size: number; attempt: number }; w: WindowMs } | undefined;
  for (const w of windows) {
    const cohorts = new Map<string, Failure[]>();
    for (const f of retried) {
      if (f.t < w.fromMs || f.t > w.toMs + bounds.afterMs) continue;
      const key = `${f.attempt}:${Math.floor(f.dbTime / bounds.bucketMs)}`;
      const members = cohorts.get(key);
      if (members) members.push(f);
      else cohorts.set(key, [f]);
    }
    let together = 0;
    let judged = 0;
    let count = 0;
    let top = { count: 0, size: 0, attempt: 0 };
    for (const members of cohorts.values()) {
      if (members.length < bounds.minCohort) continue;
      const dense = densestSpan(members.map((f) => f.retryAt).sort((a, b) => a - b), bounds.bucketMs);
      together += dense.count;
      judged += members.length;
      count++;
      if (dense.count / members.length > top.count / Math.max(1, top.size)) top = { count: dense.count, size: members.length, attempt: members[0].attempt };
    }
    if (judged === 0) continue;
    const share = together / judged;
    if (!worst || share > worst.share) worst = { share, together, judged, cohorts: count, top, w };
  }
  if (!worst || worst.judged < bounds.minRetries) {
    return {
      ...base,
      pass: 'unknown',
      // The worst window's, as the figure says: the share and the verdict are that window's.
      judged: { n: worst?.judged ?? 0, what },
      figure: `${fmt(worst?.judged ?? 0)} retries in cohorts of ${fmt(bounds.minCohort)}+ after the outage; fewer than ${fmt(bounds.minRetries)} tell nothing`,
    };
  }
  return {
    ...base,
    pass: worst.share <= bounds.maxCohortShare,
    judged: { n: worst.judged, what },
    figure:
      `${fmt(worst.together)} of ${fmt(worst.judged)} retries (${fmt(worst.share * 100, 1)} %) came due within ${fmt(bounds.bucketMs)} ms of their cohort ` +
      `(${fmt(worst.cohorts)} cohorts of jobs that failed together; lockstep is 100 %); ` +
      `tightest: ${fmt(worst.top.count)} of ${fmt(worst.top.size)} after attempt ${worst.top.attempt}; outage at ${fmt(worst.w.fromMs)}-${fmt(worst.w.toMs)} ms`,
  };
}

export const retrySpread: CheckerDef<RetrySpreadBounds> = {
  name: 'retry-spread',
  says: 'after a shared outage, jobs that failed together do not come due together again (jitter, not lockstep)',
  check: checkRetrySpread,
  bounds: { maxCohortShare: 'number', bucketMs: 'number', afterMs: 'number', minCohort: 'number', minRetries: 'number' },
  defaults: { maxCohortShare: 0.5, bucketMs: 1_000, afterMs: 60_000, minCohort: 5, minRetries: 20 },
};
