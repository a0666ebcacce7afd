import { defineScenario } from '../harness/scenario.ts';

/**
 * Most queues are quiet most of the time: a trickle of jobs to a fleet that
 * sits idle between them. Each job must start when it is enqueued, woken by
 * the enqueue trigger's NOTIFY, not when a worker next looks. A worker that
 * finds nothing looks again 10 ms later, then twice as late each time, up to
 * its poll (10 s here): after a 3 s lull its next look is about 2 s away, so a
 * fleet that does not hear the NOTIFY starts every job of this trickle seconds
 * late while every other invariant holds. (At a few jobs a second those looks
 * come often enough to hide it.) Twice the workers' connections are cut (a
 * pooler or failover dropping them, an operator's pg_terminate_backend), the
 * LISTEN connection with them: each worker must listen again.
 */
export default defineScenario({
  name: 'quiet-hours',
  description:
    'A trickle of jobs, one every 3 s, to an idle fleet whose poll fallback is 10 s: each job starts as it is enqueued, woken by NOTIFY, not by the poll or a later look; twice every worker connection is terminated, LISTEN included, and each worker listens again.',
  seed: 23,
  durationS: 45,
  load: { model: 'constant', rate: 1 / 3 },
  workers: 2,
  concurrency: 10,
  lanes: [{ queue: 'default', priority: 0, share: 1 }],
  mix: [
    { kind: 'normal', share: 2, durationMs: { dist: 'lognormal', medianMs: 5, p99Ms: 50 } },
    { kind: 'effect', share: 1, durationMs: { dist: 'uniform', minMs: 2, maxMs: 10 } },
  ],
  engine: { leaseMs: 15_000, heartbeatMs: 5_000, pollMs: 10_000 },
  faults: [
    { fault: 'db-terminate-backends', atS: 14, scope: 'workers' },
    { fault: 'db-terminate-backends', atS: 29, scope: 'workers' },
  ],
  thresholds: { oldestAgeSloMs: 2_000, deadLetterDepthAlert: 1 },
  checkers: { 'prompt-wakeup': true, 'no-phantom-finish': true, 'parameters-honoured': true },
  drainTimeoutS: 20,
});
