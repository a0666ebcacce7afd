/**
 * The claim-ahead buffer's size when the user left `claimAhead` unset: `concurrency` while the queue keeps up, and
 * more while it is backed up, so that claims per second fall as the backlog grows.
 *
 * Why: a claim's cost is not only the jobs it takes. Under a held xmin horizon (a long REPEATABLE READ reader) every
 * claim steps over the due index's entries of every job claimed since the oldest reader began, up to ~96,000 at
 * 800 jobs/s and a 120 s hold, and claims of 10 at a time paid that 80 times a second (docs/performance.md, "A held
 * xmin horizon"). Claims of a few hundred pay it a few times a second: the claim's batch, as graphile-worker's
 * local queue of 500, is what holds that profile.
 *
 * Two bounds, both time:
 * - the pace: about what the slots run in AHEAD_WAIT_MS at the handlers' mean duration, so slow handlers
 *   (concurrency x AHEAD_WAIT_MS / mean below `base`) keep `base`: nothing changes for them;
 * - the wait measured: a job claimed ahead must start before its first renewal is due. The handlers' mean leaves
 *   out what else the worker spends per job (recording outcomes, a loaded CPU, a stall while a suspect runs alone),
 *   so when a job that waited in the buffer took longer than half a heartbeat period to get a slot, the next
 *   size is scaled down by that much; it then grows back at most twofold a claim. A buffer sized so keeps its jobs
 *   off the heartbeat's one-renewal-per-job path, and far inside their leases.
 * The buffer grows only after a claim came back full (the queue had at least that many due), and falls back to
 * `base` after one that came back short.
 */

/** About how long a job claimed ahead by a grown buffer waits for a slot, at the handlers' mean duration. */
export const AHEAD_WAIT_MS = 100;
/** The most a grown buffer holds (graphile-worker batched holds up to 500 in its local queue). */
export const AHEAD_CAP = 500;

export interface AheadInputs {
  /** The default buffer (= concurrency). */
  base: number;
  concurrency: number;
  /** The handlers' mean duration, ms (a handler under 1 ms counts as 1 ms; NaN before the first one ran). */
  meanHandlerMs: number;
  /** The last claim got every job it asked for. */
  lastClaimFull: boolean;
  /** The buffer's size for the claim that just returned. */
  current: number;
  /** The longest a job waited in the buffer for a slot since the claim before, ms (0: none waited). */
  longestWaitMs: number;
  /** The longest a job should wait in the buffer, ms: half the shortest heartbeat period of the worker's queues. */
  maxWaitMs: number;
}

/** Claim-ahead for the next claim. */
export function claimAheadFor(a: AheadInputs): number {
  if (!a.lastClaimFull || Number.isNaN(a.meanHandlerMs)) return a.base; // no handler has run yet: its pace is unknown
  const paced = Math.min(AHEAD_CAP, Math.floor((a.concurrency * AHEAD_WAIT_MS) / Math.max(a.meanHandlerMs, 1)));
  const measured =
    a.longestWaitMs > a.maxWaitMs ? Math.floor((a.current * a.maxWaitMs) / a.longestWaitMs) : Math.max(a.current, 1) * 2;
  return Math.max(a.base, Math.min(paced, measured));
}

/** Weight of the newest handler duration in the running mean (an exponential moving average over ~20 jobs). */
export const HANDLER_MEAN_WEIGHT = 0.05;
