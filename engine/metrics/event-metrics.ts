import type { Events } from '../events.ts';
import type { StampedeMetrics } from './registry.ts';

/**
 * The largest number of distinct `reason` label values a process will create
 * for failures; later new reasons count as `other`. A handler that throws a
 * fresh error class per job must not be able to blow up the series count.
 */
export const MAX_FAILURE_REASONS = 20;

/**
 * A failure's error text reduced to a small, stable label value. Pure.
 *
 *  - timeouts (JobTimeoutError, "timed out", "timeout") → `timeout`
 *  - a lost lease → `lease_lost`
 *  - text that starts with an error class name (`TypeError: …`,
 *    `PaymentDeclinedError …`) → that name in snake case (`type_error`)
 *  - a thrown non-Error (coerceError's NonErrorThrown) → `non_error_thrown`
 *  - anything else → `error`
 *
 * Free text never becomes a label: ids, URLs and messages would make one
 * series per job.
 */
export function failureReason(error: string): string {
  const text = error.trim();
  if (/^JobTimeoutError\b|\btimed out\b|\btimeout\b/i.test(text)) return 'timeout';
  if (/^LeaseLostError\b|\blease lost\b/i.test(text)) return 'lease_lost';
  const named = /^([A-Z][A-Za-z0-9]{0,62}(?:Error|Exception|Thrown))\b/.exec(text);
  if (named) return snakeCase(named[1]);
  return 'error';
}

/**
 * A dead-letter reason reduced to `attempts_exhausted`, `crashed` or `other`.
 * Pure. Anchored on the engine's own prefixes ("attempts exhausted: <last
 * error>", "crashed its worker N times"), so an error message that happens
 * to say "crash" does not change the class.
 */
export function deadReason(reason: string): string {
  if (/^attempts exhausted\b/i.test(reason)) return 'attempts_exhausted';
  if (/^crashed its worker\b/i.test(reason)) return 'crashed';
  return 'other';
}

function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/**
 * Feeds the RED counters and histograms from the engine's typed events.
 * Returns the function that unsubscribes every listener. The listeners only
 * touch in-memory counters, so they cannot slow the worker loop, and Events
 * reports rather than propagates anything they throw.
 */
export function bindEngineEvents(events: Events, metrics: StampedeMetrics): () => void {
  const reasons = new Set<string>();
  const boundedReason = (error: string) => {
    const r = failureReason(error);
    if (reasons.has(r)) return r;
    if (reasons.size >= MAX_FAILURE_REASONS) return 'other';
    reasons.add(r);
    return r;
  };
  const offs = [
    events.on('job:claimed', (e) => {
      metrics.claims.inc({ queue: e.queue });
      // Both instants come from the database, so node skew cannot distort the lane wait.
      const delaySeconds = (e.dbClaimedAt - e.runAt) / 1000;
      if (Number.isFinite(delaySeconds)) metrics.claimDelay.observe({ queue: e.queue, priority: String(e.priority) }, Math.max(0, delaySeconds));
    }),
    events.on('job:completed', (e) => {
      metrics.completions.inc({ queue: e.queue });
      metrics.duration.observe({ queue: e.queue, outcome: 'completed' }, e.durationMs / 1000);
    }),
    events.on('job:failed', (e) => {
      metrics.failures.inc({ queue: e.queue, reason: boundedReason(e.error) });
      metrics.duration.observe({ queue: e.queue, outcome: 'failed' }, e.durationMs / 1000);
    }),
    events.on('job:dead', (e) => {
      metrics.deadLettered.inc({ queue: e.queue, reason: deadReason(e.reason) });
    }),
    events.on('lease:lost', (e) => {
      metrics.leasesLost.inc({ queue: e.queue, phase: e.phase });
    }),
    events.on('lease:rescued', (e) => {
      metrics.leasesExpired.inc({ queue: e.queue });
    }),
    events.on('cron:refused', (e) => {
      metrics.cronRefusals.inc({ node: e.nodeId });
      // A refusal carries a fresh measurement of the skew that caused it.
      if (Number.isFinite(e.skewMs)) metrics.setClockSkew(e.nodeId, e.skewMs / 1000);
    }),
  ];
  return () => {
    for (const off of offs) off();
  };
}
