import { dbClockSteps, elapsedOnDbClock, type EventOf, type FinalState, type HistoryEvent, type InvariantResult } from '../history.ts';
import { firstN, fmt, maxOf, median, minOf, type CheckerDef } from './types.ts';

export interface FairnessBounds {
  /** Longest a low-lane job may wait from due to claimed, in ms. Default 30,000. */
  maxLowWaitMs: number;
  /** Queues that make up the low lane. Default [] : the lowest priority claimed in the run is the low lane. */
  lowQueues: string[];
  /** Queues that make up the high lane, for the comparison. Default [] : the highest priority claimed. */
  highQueues: string[];
  /**
   * The aging bound, relative to the high lane: the low lane's longest wait may exceed the high
   * lane's longest by at most this (the engine's (q - p) * agingMs, plus a claim cycle of slack).
   * Under overload every lane's wait grows; this says the low lane is not left behind. Default: off.
   */
  maxLowOverHighMs: number;
}

/**
 * A saturated high lane must not starve the low lane (promotion by age).
 *
 * Wait is due-to-start: the claim's database time (`dbTime`, else the node's
 * `nodeTime`) minus the row's `runAt`, both epoch ms, less what a database
 * clock step skipped in between. For a first attempt the
 * generator's own lateness (`sentAt - intendedAt` of its `enqueue:ok`) is
 * added, because the job was due when it was meant to be offered: a stalled
 * generator cannot hide a stall of the queue (coordinated omission). A
 * low-lane job never claimed by the end waits at least from its acknowledgement
 * to the last event, and fails the check if that already exceeds the bound.
 */
const OFF = Number.MAX_SAFE_INTEGER;

export function checkFairness(history: readonly HistoryEvent[], final: FinalState, bounds: FairnessBounds): InvariantResult {
  // What a database clock step skipped over is not time anyone waited (elapsedOnDbClock).
  const steps = dbClockSteps(history);
  const claims = history.filter((e): e is EventOf<'job:claimed'> => e.type === 'job:claimed');
  const lowP = minOf(claims.map((c) => c.priority));
  const highP = maxOf(claims.map((c) => c.priority));
  const byQueues = bounds.lowQueues.length > 0;
  const isLow = (queue: string, priority: number) => (byQueues ? bounds.lowQueues.includes(queue) : priority === lowP);
  const isHigh = (queue: string, priority: number) =>
    bounds.highQueues.length > 0 ? bounds.highQueues.includes(queue) : !byQueues ? priority === highP && highP !== lowP : !bounds.lowQueues.includes(queue);

  const oks = new Map<number, EventOf<'enqueue:ok'>>();
  for (const e of history) if (e.type === 'enqueue:ok') oks.set(e.jobId, e);

  const low: number[] = [];
  const high: number[] = [];
  const over: unknown[] = [];
  let unmeasured = 0;
  for (const c of claims) {
    const at = c.dbTime ?? c.nodeTime;
    if (at === undefined) {
      unmeasured++;
      continue;
    }
    const ok = c.attempt === 1 ? oks.get(c.jobId) : undefined;
    const wait = Math.max(0, elapsedOnDbClock(c.runAt, at, steps)) + (ok ? Math.max(0, ok.sentAt - ok.intendedAt) : 0);
    if (isLow(c.queue, c.priority)) {
      low.push(wait);
      if (wait > bounds.maxLowWaitMs) over.push({ jobId: c.jobId, queue: c.queue, attempt: c.attempt, waitMs: wait });
    } else if (isHigh(c.queue, c.priority)) high.push(wait);
  }

  const claimed = new Set(claims.map((c) => c.jobId));
  const lastT = history.length ? history[history.length - 1].t : 0;
  const starved: unknown[] = [];
  for (const job of final.jobs) {
    if (claimed.has(job.id) || !isLow(job.queue, job.priority)) continue;
    const ok = oks.get(job.id);
    if (ok && lastT - ok.t > bounds.maxLowWaitMs) starved.push({ jobId: job.id, queue: job.queue, neverClaimedForMs: lastT - ok.t });
  }

  const maxLow = maxOf(low);
  const lanes = byQueues ? `low ${bounds.lowQueues.join(',')}` : `low priority ${lowP}, high priority ${highP}`;
  const figure =
    `low-lane max wait ${fmt(maxLow)} ms over ${fmt(low.length)} claims, ${fmt(starved.length)} never claimed; ` +
    `median wait high ${fmt(median(high))} ms vs low ${fmt(median(low))} ms (${lanes})` +
    (unmeasured ? `; ${fmt(unmeasured)} claims without a clock reading` : '');
  const maxHigh = maxOf(high);
  const leftBehind = bounds.maxLowOverHighMs < OFF && maxLow > maxHigh + bounds.maxLowOverHighMs;
  const fail = over.length > 0 || starved.length > 0 || leftBehind;
  const examples = [...firstN(over), ...firstN(starved)];
  // One lane only (every claim at one priority): there is no low lane to starve, so nothing was judged.
  const lanesJudged = byQueues || lowP !== highP;
  return {
    name: 'fairness',
    pass: fail ? false : low.length === 0 || !lanesJudged ? 'unknown' : true,
    figure,
    bound:
      `low-lane max wait <= ${fmt(bounds.maxLowWaitMs)} ms` +
      (bounds.maxLowOverHighMs < OFF ? ` and <= high-lane max (${fmt(maxHigh)} ms) + ${fmt(bounds.maxLowOverHighMs)} ms` : ''),
    judged: { n: lanesJudged ? low.length : 0, what: 'low-lane claims' },
    ...(examples.length ? { examples } : {}),
  };
}

export const fairness: CheckerDef<FairnessBounds> = {
  name: 'fairness',
  says: 'the low lane is served within its wait bound while the high lane is busy',
  check: checkFairness,
  bounds: { maxLowWaitMs: 'number', lowQueues: 'string[]', highQueues: 'string[]', maxLowOverHighMs: 'number' },
  defaults: { maxLowWaitMs: 30_000, lowQueues: [], highQueues: [], maxLowOverHighMs: Number.MAX_SAFE_INTEGER },
};
