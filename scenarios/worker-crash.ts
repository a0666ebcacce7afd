import { defineScenario } from '../harness/scenario.ts';

/**
 * Workers die mid-job: the OOM killer, a spot instance reclaimed, a deploy
 * that SIGKILLs instead of draining. Kills land at random moments under load,
 * and twice at exact points: inside a handler, and after an effect committed
 * but before the worker heard back (the moment a naive queue applies a
 * payment twice). Leases expire, the rescuer hands the jobs on, and every job
 * still ends done exactly once, with exactly one effect.
 */
export default defineScenario({
  name: 'worker-crash',
  description:
    'Workers SIGKILLed mid-job under load (OOM killer, spot reclaim, a deploy that kills instead of draining), at random moments and at exact points: mid-handler and after the effect committed. No job lost, exactly one effect, no completion from a worker that lost its lease.',
  seed: 11,
  durationS: 16,
  load: { model: 'poisson', rate: 250 },
  workers: 3,
  concurrency: 16,
  mix: [
    { kind: 'normal', share: 7, durationMs: { dist: 'lognormal', medianMs: 20, p99Ms: 200 } },
    { kind: 'effect', share: 3, durationMs: { dist: 'uniform', minMs: 10, maxMs: 40 } },
  ],
  // A killed worker's jobs come back after its lease; a job caught in two kills must not be convicted as poison,
  // so the crash-loop limit is above the number of kills one job can plausibly meet.
  engine: { leaseMs: 2_000, heartbeatMs: 500, pollMs: 100, rescueIntervalMs: 250, maxCrashes: 4, maxAttempts: 8 },
  faults: [
    { fault: 'worker-kill', atS: 3, everyS: 3, jitterS: 1, untilS: 14, target: 'worker:random', point: 'any' },
    { fault: 'worker-kill', atS: 5, target: 'worker:0', point: 'mid-handler' },
    { fault: 'worker-kill', atS: 9, target: 'worker:1', point: 'after-effect' },
  ],
  thresholds: { oldestAgeSloMs: 5_000 },
  drainTimeoutS: 30,
});
