import { defineScenario } from '../harness/scenario.ts';

/**
 * One tenant of a shared queue floods it: a bulk import, a runaway
 * integration, a customer's backfill of 1,500 jobs at once. Four quiet tenants
 * go on enqueueing their trickle beside it. The queue is fair
 * (maxInFlightPerKey 8, docs/operating.md "Tenants"): the noisy tenant never
 * holds more than 8 of the fleet's 24 slots (per-key-limit, judged at the
 * downstream per key) and each claim's walk over the keys gives every quiet
 * tenant its turn, so none of their jobs waits behind the flood
 * (tenant-fairness). Workers are SIGKILLed while it floods: their leases
 * expire, the suspects come back under the same cap. Without the fair share
 * (--mutant claim-ignores-keys) the flood takes every slot in due order and
 * the quiet tenants wait seconds behind it; without the cap (--mutant
 * no-per-key-limit) the noisy tenant holds far more than 8 at once. Beside
 * it, a sequential queue (`accounts`): the same four tenants' jobs, some
 * failing once, must run one at a time per key in enqueue order, retries
 * and the reruns of killed workers' jobs before the key's next job
 * (sequence-order; --mutant sequence-ignores-head overtakes them).
 */
export default defineScenario({
  name: 'noisy-tenant',
  description:
    'A tenant floods a shared queue with 1,500 jobs at once beside four quiet tenants, workers killed meanwhile: the noisy one never holds more than its 8 slots and no quiet job waits behind the flood. Compare --mutant claim-ignores-keys and no-per-key-limit.',
  seed: 44,
  durationS: 20,
  load: { model: 'poisson', rate: 20 },
  workers: 3,
  concurrency: 8,
  lanes: [
    { queue: 'tenants', priority: 0, share: 3 },
    // Sequential (per account, one at a time in enqueue order), with retries among its jobs.
    { queue: 'accounts', priority: 0, share: 1 },
  ],
  tenants: { queues: ['tenants', 'accounts'], keys: { 'quiet-1': 1, 'quiet-2': 1, 'quiet-3': 1, 'quiet-4': 1 } },
  mix: [
    { kind: 'downstream', share: 6 },
    // A failing first attempt: its key waits out the retry's backoff (0-1 s) before its next job may start.
    { kind: 'flaky', share: 1, failAttempts: 1, lanes: ['accounts'] },
  ],
  // Capacity far above the fleet's 24 slots: the downstream only counts, per key; 50 ms calls.
  downstream: { capacity: 1_000, callMs: 50 },
  queueLimits: { tenants: { maxInFlightPerKey: 8 }, accounts: { sequential: true } },
  // Set at the command line (stampede control limit / key-weight, each its own process), as an operator sets them.
  limitsVia: 'cli',
  engine: { leaseMs: 2_000, heartbeatMs: 500, pollMs: 100, rescueIntervalMs: 250, maxCrashes: 4, maxAttempts: 10 },
  faults: [
    { fault: 'thundering-herd', atS: 2, count: 1_500, queue: 'tenants', kind: 'downstream', fairnessKey: 'noisy' },
    { fault: 'worker-kill', atS: 5, everyS: 4, jitterS: 1, untilS: 14, target: 'worker:random', point: 'any' },
  ],
  // The flood is the incident: 8 at once drain it at about 90 jobs/s on a loaded machine, some 17 s, by design.
  incident: { fromS: 2, toS: 20 },
  checkers: {
    'per-key-limit': true,
    // 1.5 s: a claim's turn (poll 100 ms) and a killed worker's restart, with room for a loaded 2-core machine;
    // in due order the quiet jobs wait behind the flood for seconds.
    'tenant-fairness': { queue: 'tenants', noisyKey: 'noisy', maxWaitMs: 1_500 },
    'sequence-order': { queue: 'accounts' },
    'exactly-one-effect': false,
  },
  thresholds: { oldestAgeSloMs: 25_000 },
  // The flood drains at the cap's pace: 25 s after the load on a loaded 2-core machine (seed 44, after the rebase).
  drainTimeoutS: 60,
});
