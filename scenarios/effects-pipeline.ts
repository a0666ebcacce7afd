import { defineScenario } from '../harness/scenario.ts';

/**
 * Every shipped component beside the worker, under load and faults, as the
 * CLI runs them: jobs record outbox intents in their effect's transaction;
 * two `stampede relay` processes race to deliver them to a receiver that
 * deduplicates by key (and refuses some first requests, holds others); the
 * relays' pruner runs with an 8 s retention and `stampede archiver` moves done
 * jobs older than 4 s. Meanwhile a relay is SIGKILLed mid-delivery three
 * times, a worker is killed right after an effect committed and another inside
 * an effect's transaction (it rolls back, with its intent), two workers are
 * restarted gracefully (SIGTERM: drain, hand back the slow jobs still
 * running), every connection is terminated, and a producer re-sends
 * enqueues whose answers it lost. Every committed intent is delivered and no
 * rolled-back one; each job sits in exactly one of jobs and job_history; no
 * dedup key goes before its retention; hand-backs are uncharged and rerun at
 * once; a re-sent enqueue is one job.
 */
export default defineScenario({
  name: 'effects-pipeline',
  description:
    'Outbox relays SIGKILLed mid-delivery, a worker killed after its effect committed, graceful worker restarts, every connection terminated and enqueues re-sent after lost answers, with the archiver and the pruner running on short retention: every committed intent delivered, no job in both or neither table, no key pruned early, hand-backs uncharged, one job per key.',
  seed: 131,
  durationS: 18,
  load: { model: 'poisson', rate: 120 },
  workers: 3,
  // 20 slots: the slow jobs hold about 30 of the 60 at once.
  concurrency: 20,
  mix: [
    { kind: 'normal', share: 5, durationMs: { dist: 'lognormal', medianMs: 5, p99Ms: 50 } },
    { kind: 'outbox', share: 3, durationMs: { dist: 'uniform', minMs: 5, maxMs: 20 } },
    // Running for seconds, so a graceful restart's 2 s grace ends with some still in flight: what is handed back
    // (about 4 per restart; at half this share one run handed back only 1 in two restarts).
    { kind: 'slow', share: 0.6, durationMs: { dist: 'uniform', minMs: 3_000, maxMs: 4_000 } },
  ],
  engine: { leaseMs: 4_000, heartbeatMs: 1_000, pollMs: 100, rescueIntervalMs: 500, maxCrashes: 4, maxAttempts: 8 },
  // The relay's lease outlasts the sink's 1 s hold, so only a killed relay's row is sent again.
  relays: { processes: 2, leaseMs: 3_000, pollMs: 200, deliveryTimeoutMs: 2_500, backoffBaseMs: 200, backoffCapMs: 1_000, retentionMs: 8_000, pruneIntervalMs: 1_000 },
  archiver: { archiveAfterMs: 4_000, intervalMs: 1_000 },
  faults: [
    { fault: 'enqueue-retry', atS: 2, count: 20 },
    { fault: 'relay-kill', atS: 4, everyS: 5, untilS: 15 },
    { fault: 'worker-kill', atS: 6, target: 'worker:1', point: 'after-effect' },
    { fault: 'worker-restart', atS: 8, target: 'worker:2' },
    // Inside an outbox job's effect transaction: it rolls back, and its intent must never be delivered.
    { fault: 'worker-kill', atS: 10, target: 'worker:1', point: 'in-effect' },
    { fault: 'db-terminate-backends', atS: 11, scope: 'all' },
    { fault: 'worker-restart', atS: 13, target: 'worker:0' },
  ],
  checkers: {
    'exactly-one-effect': { kinds: ['outbox'] },
    'no-phantom-finish': true,
    'outbox-delivery': true,
    'archive-once': true,
    'prune-retention': true,
    'hand-back': true,
    'idempotent-enqueue': true,
  },
  drainTimeoutS: 30,
});
