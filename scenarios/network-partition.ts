import { defineScenario } from '../harness/scenario.ts';

/** Slow answers from 2 s before a partition until just after it began: renewals heard 700 ms after the database ran them. */
const LATE_ANSWERS = { forS: 2.5, latencyMs: 700, direction: 'toClient' } as const;

/**
 * The link between workers and Postgres fails, through the harness's own
 * proxy per worker (docs/network-faults.md). Worker 0 is cut off both ways
 * for 6 s, longer than its 3 s leases: its queries hang with the connections
 * open, so it must abort its own handlers once a lease may have expired
 * (before the rescuer gives the jobs to another worker), and after the heal
 * every job it held runs again within lease + rescue. Worker 1 loses its
 * answers only (one way, 6 s: the server runs its renewals and completions;
 * it never hears), worker 2 its requests only (5 s). For 2 s before each
 * partition the worker's answers come 700 ms late, so the lease it last heard
 * of began well before it heard: it must count from the send. Meanwhile: 60 ± 40 ms of
 * latency on one link, a 20 kB/s cap on another, every connection reset at
 * once, and four answers lost right after the server committed them: an
 * enqueue (the producer re-sends with its key), a claim, a completion and an
 * effect's transaction. Nothing acknowledged is lost, nothing runs twice at
 * once, no effect is applied twice. 1,000 jobs fall due 0.1 s before worker 0's
 * heal and again before worker 2's, so a claim sent into the partition finds
 * some when it runs.
 */
export default defineScenario({
  name: 'network-partition',
  description:
    'The worker-Postgres link fails: partitions both ways and one way (longer than the lease), latency with jitter, a bandwidth cap, connection resets, and answers lost right after the commit (enqueue, claim, completion, effect). Cut-off handlers abort before the takeover, held jobs run again within lease + rescue after the heal, unknown outcomes resolve without loss or duplicate.',
  seed: 41,
  durationS: 30,
  load: { model: 'poisson', rate: 40 },
  workers: 3,
  concurrency: 8,
  mix: [
    { kind: 'normal', share: 6, durationMs: { dist: 'lognormal', medianMs: 20, p99Ms: 200 } },
    { kind: 'effect', share: 3, durationMs: { dist: 'uniform', minMs: 10, maxMs: 40 } },
    // Longer than the lease, held by heartbeats: what a partition catches in flight, still running when the lease runs out.
    { kind: 'slow', count: 80, durationMs: { dist: 'uniform', minMs: 4_000, maxMs: 6_000 } },
  ],
  engine: { leaseMs: 3_000, heartbeatMs: 500, pollMs: 100, rescueIntervalMs: 500, maxCrashes: 4, maxAttempts: 8 },
  faults: [
    { fault: 'reset-after-commit', atS: 2, point: 'enqueue' },
    { fault: 'latency', atS: 2, forS: 8, target: 'worker:1', latencyMs: 60, jitterMs: 40 },
    { fault: 'bandwidth', atS: 2, forS: 6, target: 'worker:2', bytesPerS: 20_000 },
    // Before each partition, the worker's answers come 700 ms late (LATE_ANSWERS): the lease its last renewal wrote
    // began when the database ran it, 700 ms before the worker heard, so a worker that counted its lease from the
    // answer would run its handlers that much past it once cut off (handler-aborted-on-lease-loss).
    { fault: 'latency', atS: 2, ...LATE_ANSWERS, target: 'worker:0' },
    // Worker 0's partition starts on its next claim, the claim itself held: it runs at the heal, finds the backlog
    // below, and its answer comes a whole lease after it was sent (recovers-after-heal). Started at a fixed time, a
    // partition caught a claim or the suspects' look before it by chance. The claim comes 0.1-1.5 s after 4 s here
    // (the slow answers above slow the worker's loop), so the heal comes that much after 10 s.
    { fault: 'partition', atS: 4, forS: 6, target: 'worker:0', startsOn: 'claim' },
    // A backlog due at the heal: the claim worker 0 sent into the partition runs when the link heals and finds jobs,
    // whose answer comes a whole lease after it was sent, so the worker gives them up and must hand them back at once
    // (recovers-after-heal). Without it that claim found whatever the other two workers had not yet taken: often nothing.
    // 2,500: the other two workers take 4-5 s to drain it, so it is still there at a heal up to 5 s late (a partition
    // that starts on a claim waits at most 5 s for one).
    { fault: 'thundering-herd', atS: 9.9, count: 2_500 },
    { fault: 'reset-after-commit', atS: 5, point: 'claim' },
    { fault: 'reset-after-commit', atS: 7, point: 'complete' },
    { fault: 'reset-after-commit', atS: 9, point: 'effect' },
    { fault: 'latency', atS: 10, ...LATE_ANSWERS, target: 'worker:1' },
    { fault: 'partition', atS: 12, forS: 6, target: 'worker:1', direction: 'toClient' },
    { fault: 'latency', atS: 18, ...LATE_ANSWERS, target: 'worker:2' },
    // Worker 2's at a fixed time: by 20 s it is often full of slow jobs and claims nothing for seconds.
    { fault: 'partition', atS: 20, forS: 5, target: 'worker:2', direction: 'toServer' },
    // The same at worker 2's heal (its requests held): a second chance, if its claim was in flight.
    { fault: 'thundering-herd', atS: 24.9, count: 1_000 },
    { fault: 'reset', atS: 26, target: 'worker:all' },
  ],
  checkers: {
    'no-phantom-finish': true,
    'no-early-takeover': true,
    'lease-fencing': true,
    'idempotent-enqueue': true,
    'recovers-after-heal': true,
    'handler-aborted-on-lease-loss': true,
    'unknown-outcome-resolved': true,
  },
  thresholds: { oldestAgeSloMs: 10_000 },
  drainTimeoutS: 40,
});
