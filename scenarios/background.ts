import type { ScenarioInput } from '../harness/scenario.ts';

/**
 * The light, realistic background load of the scheduling scenarios (cron-skew
 * and the DST nights): they are about which occurrences become jobs, so the
 * workers only need ordinary traffic beside them, 10 % of it with an effect.
 */
export const BACKGROUND_TRAFFIC = {
  mix: [
    { kind: 'normal', share: 9, durationMs: { dist: 'lognormal', medianMs: 5, p99Ms: 50 } },
    { kind: 'effect', share: 1, durationMs: { dist: 'uniform', minMs: 2, maxMs: 10 } },
  ],
  workers: 2,
  concurrency: 8,
  engine: { pollMs: 100 },
} satisfies ScenarioInput;

/** The payload of a scheduled job: a short normal job for the built-in handlers. */
export const SCHEDULED_JOB = { kind: 'normal', params: { durationMs: 5 } };

/**
 * The dashboard's queries on queue limits (ops/grafana/stampede.json): a scenario that sets none
 * gets no data from them, and says so to dashboard-queries-live (its `mayBeEmpty`).
 */
export const LIMIT_PANELS = ['panel "In flight vs global limit" target A', 'panel "In flight vs global limit" target B', 'panel "Paused queues and start-rate limits" target B'];
