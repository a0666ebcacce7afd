import { defineScenario } from '../harness/scenario.ts';

/**
 * Two tenants of a shared fair queue flood it at once, one paying for three
 * times the share of the other (key weights 3 and 1), beside a trickle of two
 * small tenants; workers SIGKILLed meanwhile. The per-key cap (16) is above
 * the fleet's 4 slots (and 4 claimed ahead), so the weights alone decide who starts: while both
 * floods wait, `gold` must take 3 of every 4 of their starts and `basic` 1
 * (weighted-share, in windows of 40 starts). Each worker has 1 slot and 1
 * claimed ahead (the default), so every claim asks for 1 or 2 jobs, less
 * than a turn of the keys (3 + 1 + the trickle's): the claims where 0016's per-claim shares gave the
 * heavy key everything. --mutant fair-pick-per-claim puts that pick back in
 * the run's database and `basic` waits for `gold`'s whole flood.
 */
export default defineScenario({
  name: 'weighted-tenants',
  description:
    'Two tenants of weights 3 and 1 flood a fair queue at once beside a trickle, in small claims (1-6 jobs), workers killed meanwhile: each takes its weight\'s share of the starts while both wait. Compare --mutant fair-pick-per-claim.',
  seed: 21,
  durationS: 12,
  load: { model: 'poisson', rate: 5 },
  workers: 4,
  // With claimAhead's default (= concurrency, grown after a full claim to what one slot runs in ~100 ms of 20 ms calls:
  // at most 5, engine/worker/claim-ahead.ts), a claim asks for 1 to 6 jobs: fair-pick-per-claim is still caught.
  concurrency: 1,
  lanes: [{ queue: 'shared', priority: 0, share: 1 }],
  tenants: { queues: ['shared'], keys: { 'trickle-1': 1, 'trickle-2': 1 } },
  mix: [{ kind: 'downstream', share: 1 }],
  downstream: { capacity: 1_000, callMs: 20 },
  queueLimits: { shared: { maxInFlightPerKey: 16 } },
  keyWeights: { shared: { gold: 3, basic: 1 } },
  // Set at the command line (stampede control limit / key-weight, each its own process), as an operator sets them.
  limitsVia: 'cli',
  engine: { leaseMs: 2_000, heartbeatMs: 500, pollMs: 100, rescueIntervalMs: 250, maxCrashes: 4, maxAttempts: 10 },
  faults: [
    { fault: 'thundering-herd', atS: 1, count: 500, queue: 'shared', kind: 'downstream', fairnessKey: 'gold' },
    { fault: 'thundering-herd', atS: 1, count: 500, queue: 'shared', kind: 'downstream', fairnessKey: 'basic' },
    { fault: 'worker-kill', atS: 4, everyS: 4, jitterS: 1, untilS: 9, target: 'worker:random', point: 'any' },
  ],
  // The floods are the incident: 4 slots drain 1,000 jobs in some 10-15 s on a loaded machine, by design.
  incident: { fromS: 1, toS: 12 },
  checkers: {
    'weighted-share': true,
    'exactly-one-effect': false,
  },
  thresholds: { oldestAgeSloMs: 30_000 },
  drainTimeoutS: 60,
});
