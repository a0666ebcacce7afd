import { defineScenario } from '../harness/scenario.ts';

/**
 * One worker's clock runs at a quarter speed against the database's (a
 * starved VM, a host clock losing time) while it holds long jobs. Its
 * heartbeat, due 1.8 s after the last by its own clock (its setting, within
 * the 2 s lease), comes 7.2 s later on the database's; its own lease-loss
 * deadline (a lease after its last renewal was sent, by its clock) later
 * still, at 7.6 s. So the lease runs out on the database clock first: once
 * the worker's next liveness renewal shows it alive past the lease's end
 * (4 s apart at this rate, within the 5 s that would convict it as dead),
 * a rescuer takes the job back, another worker claims it, and only then does
 * the slow worker's renewal arrive. The lease-token fence must refuse it
 * (the worker then learns it lost the job and aborts its handler), and
 * nothing it writes afterwards may land over the new holder. Every long job
 * that worker takes during the window goes this way, so the race is provoked
 * on purpose, several times a run, and the fault's evidence counts the
 * renewals refused. The renewal-unfenced mutant is caught here: its renewal
 * lands on the new holder's lease.
 */
export default defineScenario({
  name: 'slow-clock',
  description:
    "One worker's clock runs at a quarter speed against the database's for 13 s while it holds long jobs: its heartbeats and its own lease-loss deadline come late on the database clock, the lease runs out and another worker takes the job over first; the fence refuses each stale renewal, the worker learns it lost the job, and nothing it writes lands over the new holder.",
  seed: 31,
  durationS: 16,
  load: { model: 'poisson', rate: 20 },
  workers: 3,
  concurrency: 8,
  mix: [
    { kind: 'normal', share: 1, durationMs: { dist: 'lognormal', medianMs: 5, p99Ms: 50 } },
    // 8-9.5 s on the first attempt (half on a retry): on the slow worker still running when its late renewal
    // comes, 7.2 s after the claim; on the others the heartbeats keep them.
    { kind: 'slow', count: 24, durationMs: { dist: 'uniform', minMs: 8_000, maxMs: 9_500 } },
    { kind: 'effect', count: 6, durationMs: { dist: 'uniform', minMs: 8_000, maxMs: 9_500 } },
  ],
  // Each takeover charges an attempt; a job that lands on the slow worker again pays another.
  engine: { leaseMs: 2_000, heartbeatMs: 600, pollMs: 100, rescueIntervalMs: 100, maxCrashes: 8, maxAttempts: 10 },
  // The slow worker's heartbeat period, close under the lease by its own clock: at a quarter speed each renewal
  // comes 5.2 s after the lease ran out on the database's, time for a liveness renewal, a rescue and a claim.
  engineByWorker: [{ heartbeatMs: 1_800 }],
  faults: [{ fault: 'clock-rate', atS: 1, target: 'worker:0', rate: 0.25, forS: 13 }],
  checkers: { 'lease-fencing': true, 'no-phantom-finish': true, 'no-early-takeover': true },
  thresholds: { oldestAgeSloMs: 5_000 },
  drainTimeoutS: 40,
});
