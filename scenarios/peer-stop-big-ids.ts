import { defineScenario } from '../harness/scenario.ts';

/**
 * A known bug's control (docs/peers.md), for graphile-worker only: its job id
 * sequence starts past 2^31 (2,147,483,647), as on a deployment that has run
 * billions of jobs, and workers are stopped gracefully (SIGTERM, a deploy's
 * rolling restart) while slow jobs run. A stopped worker waits its 2 s grace,
 * then graphile-worker's forceful shutdown releases what still runs with
 * failJobs. graphile-worker 0.17.2 cast those ids to int[] there ("value ... is
 * out of range for type integer", graphile/worker#611), so the jobs stayed
 * locked for 4 hours; 0.17.3 (#613) casts to bigint[]. released-at-stop judges
 * every job a stop caught running. Not in the gate: it shows a peer's behaviour.
 */
export default defineScenario({
  name: 'peer-stop-big-ids',
  description:
    "graphile-worker workers stopped gracefully (SIGTERM) while slow jobs run, with job ids past 2^31: the jobs still running at the grace's end are released only if failJobs takes bigint ids (a known bug's control, graphile-worker 0.17.2 against 0.17.3).",
  seed: 7,
  durationS: 8,
  load: { model: 'poisson', rate: 20 },
  workers: 3,
  concurrency: 4,
  mix: [
    { kind: 'normal', share: 8, durationMs: { dist: 'lognormal', medianMs: 20, p99Ms: 200 } },
    // Held for seconds: a stop's 2 s grace ends with some of them still running.
    { kind: 'slow', count: 16, durationMs: { dist: 'uniform', minMs: 3_000, maxMs: 4_000 } },
  ],
  faults: [{ fault: 'worker-restart', atS: 2, everyS: 2, jitterS: 0.5, untilS: 6, target: 'worker:random' }],
  peerSettings: { 'graphile-worker': { jobIdsFrom: 2_147_483_700 } },
  checkers: { 'released-at-stop': true },
  // A released job is due e^attempts s later (2.7 s after a first attempt) and a retried slow job takes 2 s: 20 s of drain is room enough.
  drainTimeoutS: 20,
});
