import { defineScenario } from '../harness/scenario.ts';

/**
 * A known bug's control (docs/peers.md), for pg-boss only: every job carries
 * its own heartbeat (`heartbeatSeconds: 10`, pg-boss's minimum) and an expiry
 * (300 s) far past the run and its drain, so a SIGKILLed worker's jobs come
 * back within the drain only if pg-boss enforces the per-job heartbeat.
 * pg-boss 12.25.1 fails jobs by heartbeat only on queues with a queue-level
 * heartbeat (dist/boss.js:149-209); 12.26.0 (commit cc12dfd) on every queue.
 * The kills land mid-handler, in slow jobs held for seconds, so each catches
 * jobs in flight. Not in the gate: it shows a peer's behaviour, not stampede's.
 */
export default defineScenario({
  name: 'peer-heartbeat-kill',
  description:
    "pg-boss workers SIGKILLed mid-job, each job with its own heartbeat and an expiry past the drain: the killed jobs come back only if the per-job heartbeat is enforced (a known bug's control, pg-boss 12.25.1 against 12.26.0).",
  seed: 5,
  durationS: 8,
  load: { model: 'poisson', rate: 20 },
  workers: 2,
  concurrency: 4,
  mix: [
    { kind: 'normal', share: 8, durationMs: { dist: 'lognormal', medianMs: 20, p99Ms: 200 } },
    { kind: 'slow', count: 10, durationMs: { dist: 'uniform', minMs: 3_000, maxMs: 4_000 } },
  ],
  faults: [{ fault: 'worker-kill', atS: 2, everyS: 2, jitterS: 0.5, untilS: 6, target: 'worker:random', point: 'mid-handler' }],
  peerSettings: { 'pg-boss': { heartbeatSeconds: 10, expireInSeconds: 300 } },
  // The last kill is at 6 s: its jobs' heartbeats go stale by 16 s, and a retried slow job takes 2 s. 20 s of drain is room enough.
  drainTimeoutS: 20,
});
