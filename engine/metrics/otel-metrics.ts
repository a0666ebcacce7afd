import type { Attributes, Meter, ObservableResult } from '@opentelemetry/api';
import type { EngineEvents, Events } from '../events.ts';
import { otel } from '../otel.ts';
import { failureReason } from './event-metrics.ts';
import { DURATION_BUCKETS_SECONDS } from './registry.ts';
import type { QueueStateSnapshot } from './queue-state-snapshot.ts';

/**
 * The worker's RED metrics, and the sampler's depth and oldest age, through
 * OpenTelemetry's metrics API beside Prometheus: recorded when the
 * application has `@opentelemetry/api` (an optional peer) and has registered
 * a MeterProvider before the worker or sampler starts. Otherwise nothing is
 * bound: no listener, no instrument, nothing on the hot path.
 *
 * Names follow the OpenTelemetry semantic conventions for messaging where one
 * applies (a claim is the consumer's receive, an attempt its process):
 *   messaging.client.consumed.messages  counter, one per claimed attempt
 *   messaging.process.duration          histogram, s, each attempt's handler
 *                                       time; a failed one with error.type
 *                                       (failureReason's bounded class)
 * and in stampede's own namespace where none does:
 *   stampede.queue.depth                gauge, claimable jobs per queue
 *   stampede.queue.oldest_unclaimed.age gauge, s, the oldest due job's wait
 */
export const OTEL_METER_NAME = 'stampede-queue';

/** The messaging system every instrument is tagged with (as the attempt spans are, engine/tracing.ts). */
const SYSTEM = 'stampede';

/** The meter, or null: no API, or no MeterProvider registered (the API's global is then a no-op meter). */
export function otelMeter(): Meter | null {
  if (!otel) return null;
  const meter = otel.metrics.getMeter(OTEL_METER_NAME);
  return meter instanceof otel.createNoopMeter().constructor ? null : meter;
}

/**
 * Records worker `workerId`'s attempts from its events (a bus shared by
 * several workers is counted once per worker: each binds its own id). Returns
 * the function that unbinds, or null when there is no meter.
 */
export function bindOtelRed(events: Events, workerId: string): (() => void) | null {
  const meter = otelMeter();
  if (!meter) return null;
  const instruments: OtelRed = {
    consumed: meter.createCounter('messaging.client.consumed.messages', {
      unit: '{message}',
      description: 'Jobs claimed by this worker (one per attempt).',
    }),
    duration: meter.createHistogram('messaging.process.duration', {
      unit: 's',
      description: "Each attempt's handler time; error.type on a failed attempt.",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS_SECONDS },
    }),
  };
  const bind = <E extends OtelRedEvent>(name: E) =>
    events.on(name, (e) => {
      if (e.workerId === workerId) (otelRedRecorders[name] as OtelRedRecorder<E>)(instruments, e);
    });
  const offs = (Object.keys(otelRedRecorders) as OtelRedEvent[]).map(bind);
  return () => {
    for (const off of offs) off();
  };
}

/** The RED instruments of one worker. */
export interface OtelRed {
  consumed: import('@opentelemetry/api').Counter;
  duration: import('@opentelemetry/api').Histogram;
}

type OtelRedEvent = 'job:claimed' | 'job:completed' | 'job:failed';
type OtelRedRecorder<E extends OtelRedEvent> = (m: OtelRed, e: EngineEvents[E]) => void;

const attrs = (queue: string, operation: string): Attributes => ({
  'messaging.system': SYSTEM,
  'messaging.operation.name': operation,
  'messaging.destination.name': queue,
});

/**
 * INTERNAL. What each of a worker's events records (its own events only: bindOtelRed filters by worker id), as
 * event-metrics.ts's redRecorders does for Prometheus: one table, so that the harness can swap an entry for a
 * broken one (its negative controls, harness/mutants/). Not exported from the package; production runs these.
 */
export const otelRedRecorders: { [E in OtelRedEvent]: OtelRedRecorder<E> } = {
  'job:claimed': (m, e) => m.consumed.add(1, attrs(e.queue, 'claim')),
  'job:completed': (m, e) => m.duration.record(e.durationMs / 1000, attrs(e.queue, 'process')),
  'job:failed': (m, e) => m.duration.record(e.durationMs / 1000, { ...attrs(e.queue, 'process'), 'error.type': failureReason(e.error) }),
};

/**
 * Observes the sampler's latest round (never a query of its own: the
 * callbacks read the cached snapshot). Returns the function that stops
 * observing, or null when there is no meter.
 */
export function observeQueueState(latest: () => QueueStateSnapshot | null): (() => void) | null {
  const meter = otelMeter();
  if (!meter) return null;
  const depth = meter.createObservableGauge('stampede.queue.depth', { unit: '{job}', description: 'Claimable (pending and failed) jobs per queue, from the last sample.' });
  const age = meter.createObservableGauge('stampede.queue.oldest_unclaimed.age', {
    unit: 's',
    description: 'How long the oldest due, unclaimed job has waited (database clock), from the last sample; 0 when none is due.',
  });
  const perQueue = (pick: (s: QueueStateSnapshot, queue: string) => number) => (result: ObservableResult) => {
    const snapshot = latest();
    if (!snapshot) return;
    for (const queue of Object.keys(snapshot.queues)) result.observe(pick(snapshot, queue), { 'messaging.system': SYSTEM, 'messaging.destination.name': queue });
  };
  const onDepth = perQueue((s, q) => s.depthByQueue[q] ?? 0);
  const onAge = perQueue((s, q) => (s.oldestUnclaimedAgeMs[q] ?? 0) / 1000);
  depth.addCallback(onDepth);
  age.addCallback(onAge);
  return () => {
    depth.removeCallback(onDepth);
    age.removeCallback(onAge);
  };
}
