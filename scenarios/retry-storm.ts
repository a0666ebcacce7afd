import { defineScenario } from '../harness/scenario.ts';

/**
 * A shared dependency (a payment provider, an internal API) returns 503 for
 * 3 s, just as a burst of 300 jobs falls due at once: they all fail within a
 * moment of each other. With fixed retry intervals they come back in
 * lockstep, hit the recovering dependency together and fail together again
 * (the AWS "exponential backoff and jitter" post, and many an outage made
 * longer by its own retries). Full jitter spreads each cohort's retries over
 * the whole backoff ceiling. The retry-spread checker groups the jobs that
 * failed together (same attempt, same 400 ms: a fifth of the 2 s base) and
 * counts how many of each group come due within 400 ms of each other again;
 * the no-jitter mutant is the fixed-interval control. Worker 1 runs with
 * --no-prepared-statements, as behind a pooler that drops prepared statements
 * between transactions: the runner puts its own proxy on each worker's link
 * to count what they bind, and worker 1's must carry no named statement while
 * it still completes its share of the storm (prepared-statements-honoured).
 */
export default defineScenario({
  name: 'retry-storm',
  description:
    'A dependency fails every call for 3 s while a burst of 300 jobs falls due at once (the retry storm that prolongs an outage): full-jitter backoff spreads the retries; compare the fixed-interval control with --mutant no-jitter.',
  seed: 53,
  durationS: 14,
  load: { model: 'poisson', rate: 50 },
  workers: 3,
  concurrency: 16,
  mix: [
    { kind: 'normal', share: 9, durationMs: { dist: 'lognormal', medianMs: 5, p99Ms: 40 } },
    { kind: 'effect', share: 1, durationMs: { dist: 'uniform', minMs: 2, maxMs: 10 } },
    // Payloads at maxPayloadBytes (262,144 bytes of UTF-8) and past it, padded mostly with two-byte characters:
    // the ones past it are about half as long in UTF-16 units as in bytes (payload-size-refused).
    { kind: 'normal', count: 3, payloadBytes: 262_144 },
    { kind: 'normal', count: 3, payloadBytes: 262_145 },
    { kind: 'normal', count: 2, payloadBytes: 400_000 },
  ],
  engine: { pollMs: 100, backoffBaseMs: 2_000, backoffCapMs: 30_000, maxAttempts: 10 },
  // The budget is the queue's (setQueueMaxAttempts), not each job's: the generator's jobs give none (attempt-budget-as-set).
  queueBudgets: { default: 10 },
  engineByWorker: [{}, { preparedStatements: false }],
  faults: [
    { fault: 'dependency-outage', atS: 4, forS: 3 },
    { fault: 'thundering-herd', atS: 4.5, count: 300 },
  ],
  // Hundreds of retries in backoff: none may start before its run_at, each delay is within its ceiling, and the
  // delays are uniform over it (full jitter, not merely under the cap).
  // The herd is a backlog of 5 ms jobs at the default claim-ahead: each worker's buffer grows past its 16 jobs, within
  // its pace (claim-ahead-paced).
  checkers: {
    'retry-spread': true,
    'no-early-start': true,
    'parameters-honoured': true,
    'sampler-agrees': true,
    'jitter-uniform': true,
    'claim-ahead-paced': { mustGrow: true },
    'payload-size-refused': true,
    'prepared-statements-honoured': true,
    'attempt-budget-as-set': true,
  },
  thresholds: { oldestAgeSloMs: 5_000 },
  drainTimeoutS: 40,
});
