/**
 * Metrics for stampede: RED on the worker loop from the typed events, queue
 * state and Postgres health sampled from the database on an interval, clock
 * skew per node, and an opt-in /metrics endpoint. See the README, "Metrics, alerts, dashboard".
 *
 * Wiring, in a worker process:
 *
 *   const metrics = createMetrics();
 *   const unbind = bindEngineEvents(events, metrics);
 *   const sampler = new QueueStateSampler(db, clock, metrics);     // one per deployment is enough
 *   const server = new MetricsServer(metrics.registry, { port });  // off when port is undefined
 *   sampler.start(); await server.start();
 *   ...
 *   await server.stop(); await sampler.stop(); unbind();
 */
export { createMetrics, exportedSeriesNames, DURATION_BUCKETS_SECONDS, CLAIM_DELAY_BUCKETS_SECONDS, type StampedeMetrics, type MetricsOptions } from './registry.ts';
export { bindEngineEvents, failureReason, MAX_FAILURE_REASONS } from './event-metrics.ts';
export {
  QueueStateSampler,
  QUEUE_STATE_SAMPLER_DEFAULTS,
  type QueueStateSamplerConfig,
  type QueueStateSnapshot,
  type QueueFigures,
} from './queue-state-sampler.ts';
export { MetricsServer, type MetricsServerConfig } from './server.ts';
export { metricNamesInPromQL, expressionsInRules, expressionsInDashboard, unknownMetricReferences } from './rule-check.ts';
