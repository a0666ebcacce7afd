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
 * The bound is time, not a count: the buffer holds about what the slots run in AHEAD_WAIT_MS at the handlers' mean
 * duration, so a job claimed ahead (and a higher-priority job enqueued behind it) waits about that long for a slot,
 * whatever the handlers cost. Slow handlers (concurrency x AHEAD_WAIT_MS / mean below `base`) keep `base`: nothing
 * changes for them. The buffer grows only after a claim came back full (the queue had at least that many due), and
 * falls back to `base` after one that came back short.
 */

/** About how long a job claimed ahead by a grown buffer waits for a slot, at the handlers' mean duration. */
export const AHEAD_WAIT_MS = 100;
/** The most a grown buffer holds (graphile-worker batched holds up to 500 in its local queue). */
export const AHEAD_CAP = 500;

/**
 * Claim-ahead for the next claim. `base`: the default (= concurrency); `meanHandlerMs`: the handlers' mean duration
 * (a handler under 1 ms counts as 1 ms; NaN before the first one finished); `lastClaimFull`: the last claim got every job it asked for.
 */
export function claimAheadFor(base: number, concurrency: number, meanHandlerMs: number, lastClaimFull: boolean): number {
  if (!lastClaimFull || Number.isNaN(meanHandlerMs)) return base; // no handler has finished yet: its pace is unknown
  const paced = Math.floor((concurrency * AHEAD_WAIT_MS) / Math.max(meanHandlerMs, 1));
  return Math.max(base, Math.min(AHEAD_CAP, paced));
}

/** Weight of the newest handler duration in the running mean (an exponential moving average over ~20 jobs). */
export const HANDLER_MEAN_WEIGHT = 0.05;
