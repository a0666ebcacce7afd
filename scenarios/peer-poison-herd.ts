import { defineScenario } from '../harness/scenario.ts';

/**
 * poison-herd's poison pills and herd, for any engine (docs/peers.md):
 * poison-herd itself is stampede's only, its herd made by stepping stampede's
 * simulated database clock (a seam in stampede's SQL, which a peer's SQL does
 * not read) over 24,000 delayed jobs and cron rows its scheduler nodes write.
 * Here the herd is what that step leaves behind, made directly: a
 * thundering-herd of 3,000 jobs due at one instant, two seconds after three
 * poison pills arrive, each job enqueued through the engine's own API. The
 * poison asks for 3 attempts, a budget an engine without crash-loop detection
 * spends within the run (pg-boss: three expiries, 5 s each), so the fleet can
 * stop dying within the run for every engine that recovers crashed jobs.
 * Not in the gate: poison-herd judges stampede.
 */
export default defineScenario({
  name: 'peer-poison-herd',
  description:
    "Poison pill + thundering herd for any engine: three payloads that SIGKILL every worker that runs them, then 3,000 jobs due at one instant (the herd a clock step leaves behind), all enqueued through the engine's own API. Nothing lost, the herd drains, the oldest age recovers, the fleet stops dying.",
  seed: 7,
  durationS: 30,
  load: { model: 'poisson', rate: 100 },
  workers: 3,
  concurrency: 8,
  mix: [
    { kind: 'normal', share: 9, durationMs: { dist: 'lognormal', medianMs: 4, p99Ms: 40 } },
    { kind: 'effect', share: 1, durationMs: { dist: 'uniform', minMs: 2, maxMs: 8 } },
  ],
  // stampede's settings (a peer's are its adapter's, docs/peers.md): the poison is convicted at its second crash.
  engine: { leaseMs: 3_000, heartbeatMs: 1_000, pollMs: 200, maxAttempts: 8, maxCrashes: 2 },
  faults: [
    { fault: 'poison-pill', atS: 6, count: 3, maxAttempts: 3 },
    { fault: 'thundering-herd', atS: 8, count: 3_000 },
  ],
  // From the poison's arrival until pg-boss's third expiry of it (6 s + 3 x (5 s expiry + 1 s supervise)).
  incident: { fromS: 6, toS: 25 },
  thresholds: { oldestAgeSloMs: 2_000 },
  checkers: {
    'oldest-age-slo': { maxRecoverMs: 15_000 },
    'fleet-recovers': { maxRecoverMs: 15_000 },
    'dead-letter-rows': true,
    'crash-loop-isolation': true,
  },
  drainTimeoutS: 30,
});
