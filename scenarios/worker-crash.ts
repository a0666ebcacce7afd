import { defineScenario } from '../harness/scenario.ts';

/**
 * Workers die mid-job: the OOM killer, a spot instance reclaimed, a deploy
 * that SIGKILLs instead of draining. Kills land at random moments under load,
 * and twice at exact points: inside a handler, and after an effect committed
 * but before the worker heard back (the moment a naive queue applies a
 * payment twice). Leases expire, the rescuer hands the jobs on, and every job
 * still ends done exactly once, with exactly one effect. After the kills, the
 * first worker to reach the middle of a slow job (3-4 s, within its lease by
 * heartbeats) is frozen there (SIGSTOP) with heartbeats on, past its 2 s
 * lease (a GC pause, a live-migrated VM), and resumed as soon as another
 * worker has taken the job over: its own clock says a whole lease passed
 * since its last renewal, so it must give the lease up and abort its handler
 * (lease:lost) while the new owner holds the job, and nothing it writes
 * afterwards may be accepted. (A holder that still renews after a takeover
 * needs a clock that runs slow: slow-clock.) Every worker runs with
 * --sample-queue-state, so the kills also end the elected queue-state
 * sampler's life now and then, and another worker must take the rounds over
 * without two of them sampling in one interval.
 */
export default defineScenario({
  name: 'worker-crash',
  description:
    'Workers SIGKILLed mid-job under load (OOM killer, spot reclaim, a deploy that kills instead of draining), at random moments and at exact points: mid-handler and after the effect committed; then one frozen past its lease with heartbeats on. No job lost, exactly one effect, no write from a worker that lost its lease.',
  seed: 11,
  durationS: 16,
  load: { model: 'poisson', rate: 250 },
  workers: 3,
  concurrency: 16,
  mix: [
    { kind: 'normal', share: 7, durationMs: { dist: 'lognormal', medianMs: 20, p99Ms: 200 } },
    { kind: 'effect', share: 3, durationMs: { dist: 'uniform', minMs: 10, maxMs: 40 } },
    // Held for seconds with heartbeats: what the freeze below stops in the middle of.
    { kind: 'slow', count: 12, durationMs: { dist: 'uniform', minMs: 3_000, maxMs: 4_000 } },
  ],
  // A killed worker's jobs come back after its lease; a job caught in two kills must not be convicted as poison,
  // so the crash-loop limit is above the number of kills one job can plausibly meet.
  engine: { leaseMs: 2_000, heartbeatMs: 500, pollMs: 100, rescueIntervalMs: 250, maxCrashes: 4, maxAttempts: 8 },
  // Worker 2 runs without a lease rescuer of its own (--no-rescue), as a deployment that leaves rescue to some of its
  // processes does: it claims and runs jobs like the others, and what expires (its own leases too: a random kill can
  // land on it) is taken back by workers 0 and 1, which keep theirs. So the rescue checks below still judge real
  // rescues: the explicit kills and the freeze hit 0, 1 or the first to reach a slow job, one process each, and a
  // killed worker is restarted within a second (worker 2 again without its rescuer: the setting is the slot's).
  // rescue-off-honoured judges worker 2's processes over the rescues that happened while they lived.
  engineByWorker: [{}, {}, { rescue: false }],
  faults: [
    { fault: 'worker-kill', atS: 3, everyS: 3, jitterS: 1, untilS: 10, target: 'worker:random', point: 'any' },
    { fault: 'worker-kill', atS: 5, target: 'worker:0', point: 'mid-handler' },
    { fault: 'worker-kill', atS: 9, target: 'worker:1', point: 'after-effect' },
    // After the kills, so the frozen worker lives to resume: lease-fencing judges what it does then.
    { fault: 'worker-stop', atS: 10.5, target: 'worker:all', point: 'mid-slow-job', forS: 12, resume: 'on-takeover' },
  ],
  checkers: {
    'no-phantom-finish': true,
    'no-early-takeover': true,
    'crash-loop-isolation': true,
    'lease-fencing': true,
    'parameters-honoured': true,
    'sampler-agrees': true,
    // The workers elect one queue-state sampler (below): the kills move the election from worker to worker.
    'one-round-per-interval': true,
    'rescue-off-honoured': true,
    'killed-holder-charged': true,
  },
  // Every worker samples queue state as a deployment's do (--sample-queue-state): one round per interval for them all.
  sampleQueueState: true,
  // Each slot's processes run under the slot's one worker id, as under a supervisor that passes a fixed --worker-id:
  // a killed worker is restarted within a second, before its 2 s leases run out, and its successor renews the id's
  // liveness row meanwhile; the rescuer must still charge the dead one's jobs a crash (killed-holder-charged).
  reuseWorkerIds: true,
  thresholds: { oldestAgeSloMs: 5_000 },
  drainTimeoutS: 30,
});
