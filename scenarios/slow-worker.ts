import { defineScenario, type ScenarioInput } from '../harness/scenario.ts';

/**
 * Jobs that run longer than the visibility timeout (the lease). A hung call,
 * a GC pause or a slow payment API holds a job past its lease on its first
 * attempt; the retry is quick. With heartbeats the lease is renewed while the
 * job runs, also inside the effect's transaction, so nothing is stolen.
 */
export const slowWorkerBase: ScenarioInput = {
  seed: 23,
  durationS: 15,
  // Light background load on four workers: a rescued job is claimed again only by a worker with nothing
  // in flight (the engine runs suspects alone), so workers must often be idle for a redelivery to come
  // while the first attempt is still running.
  load: { model: 'poisson', rate: 20 },
  workers: 4,
  concurrency: 8,
  mix: [
    { kind: 'normal', share: 1, durationMs: { dist: 'lognormal', medianMs: 5, p99Ms: 50 } },
    // First attempt 2.4-3.0 s, past the 2 s lease; a retry takes half, within it.
    { kind: 'slow', count: 15, durationMs: { dist: 'uniform', minMs: 2_400, maxMs: 3_000 } },
    // Half before the effect, half inside its transaction (the slow call itself); a retry takes half.
    { kind: 'effect', count: 15, durationMs: { dist: 'uniform', minMs: 3_000, maxMs: 3_800 } },
  ],
  // Retries come back within seconds, so a redelivered job finishes inside the drain.
  engine: { leaseMs: 2_000, heartbeatMs: 500, pollMs: 100, rescueIntervalMs: 250, backoffBaseMs: 500, backoffCapMs: 4_000 },
  thresholds: { oldestAgeSloMs: 5_000 },
  drainTimeoutS: 30,
};

export default defineScenario({
  ...slowWorkerBase,
  name: 'slow-worker',
  description:
    'Jobs longer than the visibility timeout (a hung call, a GC pause, a slow payment API inside the effect): with heartbeats the lease is renewed and nothing is stolen, not once; beside them retries that recover, retries that run out of budget and delayed jobs, none started early. Compare slow-worker-no-heartbeat.',
  // Nothing stolen, made checkable twice over: a takeover at any age counts as a concurrent claim (bound:
  // an hour), and one rescue of a job convicts it as a crash loop (maxCrashes 1), so a healthy job would
  // end dead and dead-letter-routing would fail.
  //
  // Worker.timeoutMs: 2.6 s. Every effect job's first attempt (3.0-3.8 s) and about two thirds of the
  // slow ones' (2.4-3.0 s) run past it and must fail with JobTimeoutError (inside the effect's transaction,
  // for half the effect jobs: it rolls back); their retries take half and finish. The rest of the slow jobs
  // still finish past the 2 s lease on heartbeats alone.
  engine: { ...slowWorkerBase.engine, maxCrashes: 1, timeoutMs: 2_600 },
  // Besides the slow jobs: flaky ones that recover on their third attempt, failing ones that run out of
  // their budget of 6 (backoff 0.5-4 s: about 6 s of retries, 11.5 s at most), and delayed ones due 2 s
  // after their enqueue. Their whole lives are checked: no early start, every attempt accounted for.
  mix: [
    ...slowWorkerBase.mix!,
    { kind: 'flaky', count: 10, failAttempts: 2 },
    { kind: 'failing', count: 5 },
    { kind: 'normal', count: 20, delayMs: 2_000, durationMs: { dist: 'fixed', ms: 5 } },
  ],
  otel: true,
  checkers: {
    'no-concurrent-claim': { leaseMs: 3_600_000 },
    'no-early-start': true,
    'no-phantom-finish': true,
    'no-early-takeover': true,
    'attempt-accounting': true,
    'parameters-honoured': true,
    'handler-timeout': true,
    // The failing jobs' dead letters coded attempts_exhausted (the timed-out attempts' retries finish: none dies of a timeout).
    'dead-letter-codes': true,
    // Traced enqueues, and workers with the OpenTelemetry SDK: first attempts, retries (flaky, failing, timed out) and handlers' spans.
    'trace-continued': true,
    // ... and a MeterProvider: each worker's OpenTelemetry RED counts against its own events, every second.
    'otel-counts-agree': true,
  },
});
