import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { fmt, type CheckerDef, type WindowMs } from './types.ts';

export interface RetrySpreadBounds {
  /** Largest share of the window's retries that may land in one bucket. Default 0.15 (15 %). */
  maxPeakShare: number;
  /**
   * Bucket width in ms: "in any one second". Default 1,000. Full jitter spreads
   * a cohort's first retry over the backoff base, so the bucket must be well
   * under it (a fifth or less) to tell jitter from lockstep; the scenario's
   * bounds resolver picks min(1,000, backoffBaseMs / 5).
   */
  bucketMs: number;
  /** How long after the outage ends its retries are still counted, in ms. Default 60,000. */
  afterMs: number;
  /** Fewer retries than this in the window and the share means nothing: unknown. Default 20. */
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

/**
 * After a shared outage, retries must not come back in lockstep. Counts
 * retries (`job:claimed` with attempt > 1), by the time each was due, from the outage's start to
 * `afterMs` past its end, in buckets of `bucketMs`, and holds the fullest
 * bucket's share of them to `maxPeakShare`. Full jitter (wait random(0, ceiling))
 * spreads each attempt's retries over its whole ceiling; fixed intervals put
 * every job that failed together into the same bucket again, attempt after
 * attempt. With several outages the worst window is reported.
 */
export function checkRetrySpread(history: readonly HistoryEvent[], _final: FinalState, bounds: RetrySpreadBounds): InvariantResult {
  const base = { name: 'retry-spread', bound: `peak ${fmt(bounds.bucketMs)} ms bucket <= ${fmt(bounds.maxPeakShare * 100, 1)} % of retries` };
  const windows = outageWindows(history);
  if (windows.length === 0) return { ...base, pass: 'unknown', figure: `no ${OUTAGE_FAULT} in the history` };

  let worst: { share: number; peak: number; total: number; atMs: number; meanPerBucket: number; w: WindowMs } | undefined;
  for (const w of windows) {
    const end = w.toMs + bounds.afterMs;
    const buckets = new Map<number, number>();
    let total = 0;
    for (const e of history) {
      if (e.type !== 'job:claimed' || e.attempt <= 1) continue;
      // When the retry was due (its jittered run_at), in run time: the claim's time less how late it
      // was claimed. A busy machine claiming a backlog in a rush must not read as lockstep retries.
      const dueT = e.dbTime !== undefined ? e.t - Math.max(0, e.dbTime - e.runAt) : e.t;
      if (dueT < w.fromMs || dueT > end) continue;
      total++;
      const b = Math.floor((dueT - w.fromMs) / bounds.bucketMs);
      buckets.set(b, (buckets.get(b) ?? 0) + 1);
    }
    if (total === 0) continue;
    const [peakBucket, peak] = [...buckets].reduce((a, b) => (b[1] > a[1] ? b : a));
    const share = peak / total;
    const meanPerBucket = total / Math.max(1, Math.ceil((end - w.fromMs) / bounds.bucketMs));
    if (!worst || share > worst.share) worst = { share, peak, total, atMs: w.fromMs + peakBucket * bounds.bucketMs, meanPerBucket, w };
  }
  if (!worst || worst.total < bounds.minRetries) {
    return { ...base, pass: 'unknown', figure: `${fmt(worst?.total ?? 0)} retries after the outage; fewer than ${fmt(bounds.minRetries)} tell nothing` };
  }
  return {
    ...base,
    pass: worst.share <= bounds.maxPeakShare,
    figure:
      `peak ${fmt(worst.peak)} of ${fmt(worst.total)} retries (${fmt(worst.share * 100, 1)} %) in the bucket at ${fmt(worst.atMs)} ms, ` +
      `${fmt(worst.peak / worst.meanPerBucket, 1)}x the mean, after the outage at ${fmt(worst.w.fromMs)}-${fmt(worst.w.toMs)} ms`,
  };
}

export const retrySpread: CheckerDef<RetrySpreadBounds> = {
  name: 'retry-spread',
  says: 'after a shared outage, no one second holds more than its share of the retries (jitter, not lockstep)',
  check: checkRetrySpread,
  bounds: { maxPeakShare: 'number', bucketMs: 'number', afterMs: 'number', minRetries: 'number' },
  defaults: { maxPeakShare: 0.15, bucketMs: 1_000, afterMs: 60_000, minRetries: 20 },
};
