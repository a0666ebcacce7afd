import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every metric stampede exports, on a Registry of its own (never prom-client's
 * global default, so two engines in one process, or a test beside a worker,
 * never share or clobber series). Names carry the `stampede_` prefix and
 * their unit (`_seconds`, `_total`); the metric catalogue lives in
 * the README, "Metrics, alerts, dashboard".
 *
 * Three families:
 *  - RED on the worker loop, fed by the engine's typed events (event-metrics.ts);
 *  - queue state and Postgres health, set by the QueueStateSampler from the
 *    database on an interval (queue-state-sampler.ts), never per scrape;
 *  - clock skew per node, set by whoever measures it (the cron materializer).
 *
 * Label cardinality is bounded on purpose: `queue` (operator-chosen names),
 * `priority` (0-9), `reason` (a small class, see failureReason), `phase`,
 * `state`, `holder`, `node`. Free text never becomes a label.
 */
export interface MetricsOptions {
  /** Labels added to every series (e.g. `{ node: 'worker-3' }`). Default none. */
  defaultLabels?: Record<string, string>;
  /** Also export Node process metrics (CPU, memory, event-loop lag) as `stampede_process_*`. Default false. */
  processMetrics?: boolean;
}

/** Job duration buckets in seconds: 5 ms to 5 min, the range between a no-op and the default backoff cap. */
export const DURATION_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Due-to-claimed delay buckets in seconds: 10 ms to 30 min, so a starving lane shows up in the top buckets. */
export const CLAIM_DELAY_BUCKETS_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

export function createMetrics(options: MetricsOptions = {}) {
  const registry = new Registry();
  if (options.defaultLabels) registry.setDefaultLabels(options.defaultLabels);
  if (options.processMetrics) collectDefaultMetrics({ register: registry, prefix: 'stampede_process_' });
  const registers = [registry];

  const metrics = {
    registry,

    // RED: rate, errors, duration on the worker loop.
    claims: new Counter({
      name: 'stampede_jobs_claimed_total',
      help: 'Jobs claimed by this process (one per attempt).',
      labelNames: ['queue'] as const,
      registers,
    }),
    completions: new Counter({
      name: 'stampede_jobs_completed_total',
      help: 'Attempts that completed successfully.',
      labelNames: ['queue'] as const,
      registers,
    }),
    failures: new Counter({
      name: 'stampede_jobs_failed_total',
      help: 'Attempts that failed (handler threw or timed out); reason is a bounded class of the error.',
      labelNames: ['queue', 'reason'] as const,
      registers,
    }),
    deadLettered: new Counter({
      name: 'stampede_jobs_dead_lettered_total',
      help: 'Jobs moved to the dead-letter table, by reason code (attempts_exhausted, timeout, lease_expired, crash_loop, operator).',
      labelNames: ['queue', 'reason'] as const,
      registers,
    }),
    leasesLost: new Counter({
      name: 'stampede_leases_lost_total',
      help: 'Leases this process found gone (heartbeat) or was fenced out of (complete, fail).',
      labelNames: ['queue', 'phase'] as const,
      registers,
    }),
    leasesExpired: new Counter({
      name: 'stampede_leases_expired_total',
      help: 'Expired leases rescued (the holder stopped heartbeating: crashed, hung or partitioned).',
      labelNames: ['queue'] as const,
      registers,
    }),
    dbErrors: new Counter({
      name: 'stampede_worker_db_errors_total',
      help: 'Statements of this worker the database refused or lost for a reason of its own, by kind (read_only, too_many_connections, shutdown, connection, serialization, lock_timeout, canceled) and where (claim, heartbeat, result, effect); no job is charged for them.',
      labelNames: ['kind', 'where'] as const,
      registers,
    }),
    cronRefusals: new Counter({
      name: 'stampede_cron_refusals_total',
      help: 'Cron materializations a node refused (e.g. its clock was skewed past the bound).',
      labelNames: ['node'] as const,
      registers,
    }),
    duration: new Histogram({
      name: 'stampede_job_duration_seconds',
      help: 'Handler run time per attempt, by outcome (completed, failed).',
      labelNames: ['queue', 'outcome'] as const,
      buckets: DURATION_BUCKETS_SECONDS,
      registers,
    }),
    claimDelay: new Histogram({
      name: 'stampede_job_claim_delay_seconds',
      help: 'From a job being due (run_at) to its claim, both on the database clock; the per-lane wait.',
      labelNames: ['queue', 'priority'] as const,
      buckets: CLAIM_DELAY_BUCKETS_SECONDS,
      registers,
    }),

    // Clock skew, set by whoever measures it.
    clockSkew: new Gauge({
      name: 'stampede_clock_skew_seconds',
      help: "A node's clock minus the database's clock (positive: the node runs ahead).",
      labelNames: ['node'] as const,
      registers,
    }),

    // Queue state, sampled from the database (QueueStateSampler).
    queueDepth: new Gauge({
      name: 'stampede_queue_depth',
      help: 'Jobs by queue and state (pending, failed, claimed); pending/failed are estimates when stampede_queue_depth_estimated is 1.',
      labelNames: ['queue', 'state'] as const,
      registers,
    }),
    queueDue: new Gauge({
      name: 'stampede_queue_due',
      help: 'Claimable jobs whose run_at has passed (due now), by queue; an estimate when stampede_queue_depth_estimated is 1.',
      labelNames: ['queue'] as const,
      registers,
    }),
    // A companion gauge rather than a label on stampede_queue_depth: a label would change the depth series'
    // identity each time a queue crossed its share of the round's budget, breaking deriv() and the panels over it.
    queueDepthEstimated: new Gauge({
      name: 'stampede_queue_depth_estimated',
      help: "1 when a queue's pending, failed and due figures are estimates (its backlog is past its share of the sampler's roundRowBudget), 0 when counted.",
      labelNames: ['queue'] as const,
      registers,
    }),
    queueDepthCapped: new Gauge({
      name: 'stampede_queue_depth_capped',
      help: 'Deprecated: the same as stampede_queue_depth_estimated (kept for dashboards built on it).',
      labelNames: ['queue'] as const,
      registers,
    }),
    deadLetterDepthEstimated: new Gauge({
      name: 'stampede_dead_letter_depth_estimated',
      help: "1 when a queue's dead-letter depth is an estimate (past its share of the sampler's roundRowBudget); whether it is above 0 is always exact.",
      labelNames: ['queue'] as const,
      registers,
    }),
    oldestUnclaimedAge: new Gauge({
      name: 'stampede_queue_oldest_unclaimed_age_seconds',
      help: 'Age of the oldest due but unclaimed job (now() - run_at, database clock), by queue: the SLO signal.',
      labelNames: ['queue'] as const,
      registers,
    }),
    leasesOverdue: new Gauge({
      name: 'stampede_leases_overdue',
      help: 'Claimed jobs whose lease has expired and that the rescuer has not yet handed back, by queue.',
      labelNames: ['queue'] as const,
      registers,
    }),
    deadLetterDepth: new Gauge({
      name: 'stampede_dead_letter_depth',
      help: 'Rows in stampede.dead_letters, by queue.',
      labelNames: ['queue'] as const,
      registers,
    }),
    queuePaused: new Gauge({
      name: 'stampede_queue_paused',
      help: '1 while an operator has the queue paused (no worker claims from it), by queue. The oldest-age alert leaves paused queues out.',
      labelNames: ['queue'] as const,
      registers,
    }),
    queueInFlightLimit: new Gauge({
      name: 'stampede_queue_in_flight_limit',
      help: 'Global max jobs in flight of a limited queue; compare stampede_queue_depth{state="claimed"}. Absent: no limit.',
      labelNames: ['queue'] as const,
      registers,
    }),
    queueStartRateLimit: new Gauge({
      name: 'stampede_queue_start_rate_limit',
      help: 'Global max starts per second of a limited queue. Absent: no limit.',
      labelNames: ['queue'] as const,
      registers,
    }),
    queueHeldBackByLimit: new Gauge({
      name: 'stampede_queue_held_back_by_limit',
      help: 'Due jobs waiting only because their queue is at its in-flight or start-rate limit, by queue.',
      labelNames: ['queue'] as const,
      registers,
    }),
    doneEstimate: new Gauge({
      name: 'stampede_jobs_done_estimate',
      help: 'Finished jobs, estimated from pg_stat_user_tables.n_live_tup less the counted states (not counted: too many rows).',
      registers,
    }),

    // Postgres health that decides a queue's fate.
    jobsDeadTuples: new Gauge({
      name: 'stampede_pg_jobs_dead_tuples',
      help: 'Dead tuples in stampede.jobs (pg_stat_user_tables.n_dead_tup): bloat vacuum has not reclaimed.',
      registers,
    }),
    jobsLiveTuples: new Gauge({
      name: 'stampede_pg_jobs_live_tuples',
      help: 'Live tuples in stampede.jobs (pg_stat_user_tables.n_live_tup, an estimate).',
      registers,
    }),
    xminHorizonAgeSeconds: new Gauge({
      name: 'stampede_pg_xmin_horizon_age_seconds',
      help: 'Age of the oldest transaction holding back the xmin horizon in this database, by holder (backend, prepared).',
      labelNames: ['holder'] as const,
      registers,
    }),
    xminHorizonAgeXids: new Gauge({
      name: 'stampede_pg_xmin_horizon_age_xids',
      help: 'Transaction IDs between the xmin horizon and now, by holder (backend, prepared, replication_slot).',
      labelNames: ['holder'] as const,
      registers,
    }),

    // The sampler's own health, so a dead sampler cannot silence the SLO alert.
    sampleTimestamp: new Gauge({
      name: 'stampede_queue_state_last_sample_timestamp_seconds',
      help: 'When the queue-state sampler last succeeded (node clock, epoch seconds).',
      registers,
    }),
    sampleDuration: new Gauge({
      name: 'stampede_queue_state_sample_duration_seconds',
      help: "How long the queue-state sampler's last successful round of queries took.",
      registers,
    }),
    sampleErrors: new Counter({
      name: 'stampede_queue_state_sample_errors_total',
      help: 'Queue-state sampling rounds that failed (the loop logs and carries on).',
      registers,
    }),

    /** Records a node's measured clock skew. For the cron materializer's skew getter. */
    setClockSkew(node: string, skewSeconds: number): void {
      if (!Number.isFinite(skewSeconds)) throw new TypeError(`setClockSkew: skewSeconds is ${skewSeconds}; expected a finite number of seconds`);
      metrics.clockSkew.set({ node }, skewSeconds);
    },

    /** The Prometheus exposition text, as /metrics serves it. */
    text(): Promise<string> {
      return registry.metrics();
    },
  };
  return metrics;
}

export type StampedeMetrics = ReturnType<typeof createMetrics>;

/**
 * Every series name a query may select from this registry: each metric's name,
 * and for histograms also the `_bucket`, `_sum` and `_count` series.
 */
export function exportedSeriesNames(registry: Registry): Set<string> {
  const names = new Set<string>();
  for (const metric of registry.getMetricsAsArray()) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram') {
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
    }
  }
  return names;
}
