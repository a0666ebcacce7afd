import { defineScenario } from '../harness/scenario.ts';

/**
 * Claim-ahead under pressure. Every job runs 3 s and each worker has two
 * slots, so with a backlog each worker also holds two jobs claimed ahead
 * that wait 3 to 6 s for a slot: three to six times their 1 s lease. Their
 * leases must be renewed while they wait (heartbeats every 250 ms), or the
 * rescuer takes them from a live worker that then runs them anyway
 * (claim-ahead-lease; compare --mutant claim-ahead-unheartbeated). Twice a
 * worker is restarted gracefully while it holds jobs claimed ahead: it must
 * hand them back, not start them (no-start-after-stop, hand-back; compare
 * --mutant stop-starts-claimed-ahead). With jobs always waiting, a worker
 * must still run no more than its two handlers at once
 * (handlers-within-concurrency; compare --mutant extra-handler-slot).
 */
export default defineScenario({
  name: 'claim-ahead',
  description:
    'Slow jobs behind two slots per worker: jobs claimed ahead wait three to six times their lease for a slot and keep it (renewed while they wait), and a worker restarted gracefully hands them back rather than starting them. Compare --mutant claim-ahead-unheartbeated and --mutant stop-starts-claimed-ahead.',
  seed: 97,
  durationS: 10,
  // 2 workers x 2 slots / 3 s: 1.33 jobs/s of capacity against 3 offered, so a backlog builds from the first seconds
  // and the claim-ahead buffers stay full. (At 2 jobs/s the backlog was thin: one run's two restarts found 2 jobs
  // claimed ahead between them.)
  load: { model: 'constant', rate: 3 },
  workers: 2,
  concurrency: 2,
  mix: [{ kind: 'normal', share: 1, durationMs: { dist: 'fixed', ms: 3_000 } }],
  engine: { leaseMs: 1_000, heartbeatMs: 250, pollMs: 100, rescueIntervalMs: 250 },
  faults: [
    // Each while its worker holds two jobs claimed ahead (the backlog is there from about 2 s on).
    { fault: 'worker-restart', atS: 4, target: 'worker:0' },
    { fault: 'worker-restart', atS: 7, target: 'worker:1' },
  ],
  checkers: {
    'exactly-one-effect': false, // no effect jobs
    'claim-ahead-lease': true,
    'no-start-after-stop': true,
    'hand-back': true,
    'no-early-takeover': true,
    // The backlog keeps both slots of every worker busy with jobs waiting behind them: a third handler would show
    // (compare --mutant extra-handler-slot).
    'handlers-within-concurrency': true,
  },
  drainTimeoutS: 40,
});
