import type { EngineEvents, Events } from '../events.ts';
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

function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** The engine events the RED series are fed from. */
type RedEvent = 'job:claimed' | 'job:completed' | 'job:failed' | 'job:dead' | 'lease:lost' | 'lease:rescued' | 'cron:refused' | 'db:error';

/** What one event adds to the series; `reason` bounds a failure's error text to a label value. */
export type RedRecorder<E extends RedEvent> = (metrics: StampedeMetrics, e: EngineEvents[E], reason: (error: string) => string) => void;

/**
 * INTERNAL. Which series each engine event feeds, one entry per event, so that
 * the harness can swap one for a deliberately broken variant (a negative
 * control of its red-metrics check, harness/mutants/) without a switch in
 * production code. Not exported from engine/index.ts and reachable through no
 * option or flag: nothing but harness/mutants/apply.ts ever assigns to it.
 */
export const redRecorders: { [E in RedEvent]: RedRecorder<E> } = {
  'job:claimed': (m, e) => {
    m.claims.inc({ queue: e.queue });
    // Both instants come from the database, so node skew cannot distort the lane wait.
    const delaySeconds = (e.dbClaimedAt - e.runAt) / 1000;
    if (Number.isFinite(delaySeconds)) m.claimDelay.observe({ queue: e.queue, priority: String(e.priority) }, Math.max(0, delaySeconds));
  },
  'job:completed': (m, e) => {
    m.completions.inc({ queue: e.queue });
    m.duration.observe({ queue: e.queue, outcome: 'completed' }, e.durationMs / 1000);
  },
  'job:failed': (m, e, reason) => {
    m.failures.inc({ queue: e.queue, reason: reason(e.error) });
    m.duration.observe({ queue: e.queue, outcome: 'failed' }, e.durationMs / 1000);
  },
  'job:dead': (m, e) => m.deadLettered.inc({ queue: e.queue, reason: e.code }),
  'lease:lost': (m, e) => m.leasesLost.inc({ queue: e.queue, phase: e.phase }),
  'lease:rescued': (m, e) => m.leasesExpired.inc({ queue: e.queue }),
  'db:error': (m, e) => m.dbErrors.inc({ kind: e.kind, where: e.where }),
  'cron:refused': (m, e) => {
    m.cronRefusals.inc({ node: e.nodeId });
    // A refusal carries a fresh measurement of the skew that caused it.
    if (Number.isFinite(e.skewMs)) m.setClockSkew(e.nodeId, e.skewMs / 1000);
  },
};

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
  const bind = <E extends RedEvent>(name: E) => events.on(name, (e) => (redRecorders[name] as RedRecorder<E>)(metrics, e, boundedReason));
  const offs = (Object.keys(redRecorders) as RedEvent[]).map(bind);
  return () => {
    for (const off of offs) off();
  };
}
