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
 *
 * Every stop catches jobs, whatever the machine's load: slow jobs take 5-7 s,
 * so one running at a stop before 3 s (the load starts at 0) is still running
 * when the 2 s grace ends; and enough of them arrive early (seed 7 places 14
 * of its 18 in the first 1.8 s, for 3 x 4 slots) that the other workers cannot
 * hold them all: each worker holds some at its stop. Each worker is stopped once,
 * by name, so no stop meets a worker just restarted and idle.
 */
export default defineScenario({
  name: 'peer-stop-big-ids',
  description:
    "graphile-worker workers stopped gracefully (SIGTERM) while slow jobs run, with job ids past 2^31: the jobs still running at the grace's end are released only if failJobs takes bigint ids (a known bug's control, graphile-worker 0.17.2 against 0.17.3).",
  seed: 7,
  durationS: 3,
  load: { model: 'poisson', rate: 10 },
  workers: 3,
  concurrency: 4,
  mix: [
    { kind: 'normal', share: 1, durationMs: { dist: 'lognormal', medianMs: 20, p99Ms: 200 } },
    // Longer than any stop's time plus its 2 s grace: every one a stop meets is still running at the grace's end.
    { kind: 'slow', count: 18, durationMs: { dist: 'uniform', minMs: 5_000, maxMs: 7_000 } },
  ],
  faults: [
    { fault: 'worker-restart', atS: 2, target: 'worker:0' },
    { fault: 'worker-restart', atS: 2.3, target: 'worker:1' },
    { fault: 'worker-restart', atS: 2.6, target: 'worker:2' },
  ],
  peerSettings: { 'graphile-worker': { jobIdsFrom: 2_147_483_700 } },
  checkers: { 'released-at-stop': true },
  // A released job is due e^1 = 2.7 s after its failJobs (about 4-5 s) and a retried slow job works 2.5-3.5 s;
  // the restarted workers take the rest from about 4.5 s: all done by about 12 s, well inside 3 + 15 s.
  drainTimeoutS: 15,
});
