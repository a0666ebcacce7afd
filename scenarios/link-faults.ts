import { defineScenario } from '../harness/scenario.ts';

/**
 * The link faults of network-partition, without its answers lost right after
 * a commit (reset-after-commit classifies stampede's own statements), so any
 * engine can run it (docs/peers.md): worker 0 cut off both ways for 6 s while
 * it holds slow jobs, worker 2 losing its answers for 4 s, 60 ± 40 ms of
 * latency on worker 1's link, then every connection reset. Nothing
 * acknowledged is lost, nothing runs twice at once, and after each heal the
 * held jobs move again. Not in the gate: network-partition judges stampede.
 */
export default defineScenario({
  name: 'link-faults',
  description:
    "Worker-Postgres link faults any engine meets: a 6 s partition both ways and a 4 s one of the answers while slow jobs are held, latency with jitter, every connection reset. Nothing lost, nothing run twice at once, held jobs move again after the heal.",
  seed: 43,
  durationS: 14,
  load: { model: 'poisson', rate: 30 },
  workers: 3,
  concurrency: 4,
  mix: [
    { kind: 'normal', share: 6, durationMs: { dist: 'lognormal', medianMs: 20, p99Ms: 200 } },
    { kind: 'effect', share: 3, durationMs: { dist: 'uniform', minMs: 10, maxMs: 40 } },
    { kind: 'slow', count: 24, durationMs: { dist: 'uniform', minMs: 3_000, maxMs: 4_000 } },
  ],
  engine: { leaseMs: 3_000, heartbeatMs: 500, pollMs: 100, rescueIntervalMs: 500, maxCrashes: 4, maxAttempts: 8 },
  faults: [
    { fault: 'latency', atS: 2, forS: 8, target: 'worker:1', latencyMs: 60, jitterMs: 40 },
    { fault: 'partition', atS: 4, forS: 6, target: 'worker:0' },
    { fault: 'partition', atS: 8, forS: 4, target: 'worker:2', direction: 'toClient' },
    { fault: 'reset', atS: 13, target: 'worker:all' },
  ],
  checkers: { 'recovers-after-heal': true, 'no-early-takeover': true },
  thresholds: { oldestAgeSloMs: 10_000 },
  drainTimeoutS: 30,
});
