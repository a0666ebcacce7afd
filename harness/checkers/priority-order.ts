import type { EventOf, FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface PriorityOrderBounds {
  /**
   * A job counts as waiting at a claim only once it has been due this long
   * before the claim's now(), ms. What the claim cannot see: the row of an
   * enqueue, failure or hand-back is written at its transaction's now() (its
   * run_at) and visible only from its commit, and the claim reads the table as
   * of its own statement's start. Default 250.
   */
  visibleAfterMs: number;
  /**
   * A claim by another worker whose statement overlapped this one's (from
   * its now() to the worker's report of it, widened by this much either
   * way) ran beside it and held its rows locked: SKIP LOCKED passes over
   * them rightly. Locked or not, they count in the claim's candidates (each
   * lane's 2 x limit oldest due rows, worker.sql ClaimJobs), so a free row
   * behind them may not have been a candidate: a passed-over job is excused
   * when such a claim took it, or when it stood at position 2 x (jobs the
   * claim took) or later in its lane (same queue and priority, by run_at).
   * Default 10.
   */
  concurrentMs: number;
}

/** A claim reported later than this after its statement began is taken to have been delayed on its way (a worker frozen), not to have run that long. */
const MAX_CLAIM_MS = 2_000;

/** The engine's default aging step (engine/defaults.ts), for histories whose worker:settings predate agingMs. */
const DEFAULT_AGING_MS = 5_000;

/** A job waiting for a claim: due from its run_at (as its next claim read it) until that claim. */
interface Wait {
  jobId: number;
  queue: string;
  priority: number;
  runAt: number;
  claimedAt: number;
  /** When that claim's statement had returned (its locks released), as near as the history tells. */
  claimEnd: number;
  claimedBy: string;
}

/** The claim statement's end: the worker's clock as it reported the claim (same host, no skew), else its start. */
function claimEndOf(c: { dbTime: number; nodeTime?: number }, maxMs: number): number {
  const took = c.nodeTime === undefined ? 0 : c.nodeTime - c.dbTime;
  return c.dbTime + (took >= 0 && took <= maxMs ? took : 0);
}

/**
 * A higher effective priority starts first (docs/engine.md, priority lanes
 * and aging): the claim orders due jobs by `priority · agingMs − run_at`, so
 * a job of priority p that has waited (q − p) · agingMs longer than one of
 * priority q ties with it. At every claim (judged when the jobs were claimed,
 * not when they started: a job claimed ahead was the best when it was claimed),
 * no job of the claiming worker's queues that was due and unclaimed may have
 * had a strictly better score than a job the claim took. A job's wait is read
 * from its next claim: the run_at that claim returned (the enqueue's, the
 * failure's retry instant, the hand-back's or the rescue's now()) until that
 * claim's now(). Suspects (crash count above 0) are claimed alone by another
 * query, oldest first, and are left out on both sides, as are queues paused at
 * the claim. The claim sees only rows committed before it started
 * (`visibleAfterMs`), skips rows another claim has locked (`concurrentMs`)
 * and picks from each lane's 2 x limit oldest due rows only. Judged: the claims taken while a job of another priority
 * waited, the ones where priority could have been ignored. Unknown with none.
 * (A queue with a global limit may be cut to its allowance by the claim gate:
 * run this on unlimited queues.)
 */
export function checkPriorityOrder(history: readonly HistoryEvent[], _final: FinalState, bounds: PriorityOrderBounds): InvariantResult {
  const agingOf = new Map<string, number>();
  const queuesOf = new Map<string, Set<string>>();
  for (const e of history) {
    if (e.type !== 'worker:settings') continue;
    agingOf.set(e.workerId, e.agingMs ?? DEFAULT_AGING_MS);
    queuesOf.set(e.workerId, new Set(Object.keys(e.queues)));
  }
  const claims = history.filter((e): e is EventOf<'job:claimed'> & { dbTime: number } => e.type === 'job:claimed' && e.dbTime !== undefined);
  const waits: Wait[] = claims
    .filter((c) => !(c.crashCount! > 0))
    .map((c) => ({ jobId: c.jobId, queue: c.queue, priority: c.priority, runAt: c.runAt, claimedAt: c.dbTime, claimEnd: claimEndOf(c, MAX_CLAIM_MS), claimedBy: c.workerId }));
  const paused = pausedSpans(history);

  // One claim statement: one worker, one now().
  const batches = new Map<string, (EventOf<'job:claimed'> & { dbTime: number })[]>();
  for (const c of claims) {
    if (c.crashCount! > 0) continue;
    const key = `${c.workerId}@${c.dbTime}`;
    batches.get(key)?.push(c) ?? batches.set(key, [c]);
  }
  const passedOver: unknown[] = [];
  let withChoice = 0;
  let judgedBatches = 0;
  let worstMs = 0;
  for (const batch of batches.values()) {
    const { workerId, dbTime: at } = batch[0];
    const atEnd = claimEndOf(batch[0], MAX_CLAIM_MS);
    const agingMs = agingOf.get(workerId) ?? DEFAULT_AGING_MS;
    const queues = queuesOf.get(workerId);
    const score = (w: { priority: number; runAt: number }) => w.priority * agingMs - w.runAt;
    const taken = new Set(batch.map((c) => c.jobId));
    const worst = batch.reduce((a, b) => (score(b) < score(a) ? b : a));
    const waiting = waits.filter(
      (w) =>
        !taken.has(w.jobId) &&
        (!queues || queues.has(w.queue)) &&
        w.runAt + bounds.visibleAfterMs <= at &&
        w.claimedAt > at &&
        !paused.some((p) => p.queue === w.queue && p.fromMs <= at && at < p.toMs),
    );
    if (waiting.length === 0) continue;
    judgedBatches++;
    const waitingPriorities = new Set(waiting.map((w) => w.priority));
    withChoice += batch.filter((c) => [...waitingPriorities].some((p) => p !== c.priority)).length;
    // What the claim could not take: rows another worker's claim beside this one held locked (SKIP LOCKED passes
    // over them), and rows outside its candidates, which are each lane's 2 x limit oldest due rows (worker.sql
    // ClaimJobs), locked or not. Its limit (free slots) is at least what it took, so every row from position
    // 2 x batch size of its lane on may have been outside them.
    const beside = (w: Wait) => w.claimedBy !== workerId && w.claimedAt <= atEnd + bounds.concurrentMs && w.claimEnd + bounds.concurrentMs >= at;
    const hidden = new Set<Wait>();
    const lanes = new Map<string, Wait[]>();
    for (const w of waits) {
      if (w.runAt + bounds.visibleAfterMs > at || !(w.claimedAt > at || beside(w) || taken.has(w.jobId))) continue;
      if (w.claimedAt <= at && !beside(w) && !(w.claimedBy === workerId && w.claimedAt === at)) continue;
      const lane = `${w.queue}/${w.priority}`;
      lanes.get(lane)?.push(w) ?? lanes.set(lane, [w]);
    }
    for (const lane of lanes.values()) {
      lane.sort((a, b) => a.runAt - b.runAt || a.jobId - b.jobId);
      lane.forEach((w, k) => {
        if (beside(w) || k >= 2 * batch.length) hidden.add(w);
      });
    }
    for (const w of waiting) {
      const byMs = score(w) - score(worst);
      if (byMs <= 0 || hidden.has(w)) continue;
      worstMs = Math.max(worstMs, byMs);
      passedOver.push({ claimedAt: at, workerId, took: { jobId: worst.jobId, priority: worst.priority, runAt: worst.runAt }, passedOver: { jobId: w.jobId, priority: w.priority, runAt: w.runAt, claimedAt: w.claimedAt }, betterByMs: byMs });
    }
  }
  const figure =
    `${fmt(passedOver.length)} times a due job was passed over for a worse effective priority` +
    (passedOver.length ? ` (worst by ${fmt(worstMs)} ms of aging)` : '') +
    `; ${fmt(withChoice)} jobs claimed while a job of another priority waited, in ${fmt(judgedBatches)} of ${fmt(batches.size)} claims with a job waiting`;
  return {
    name: 'priority-order',
    pass: passedOver.length > 0 ? false : withChoice > 0 ? true : 'unknown',
    figure,
    bound: `0 passed over (a job due ${fmt(bounds.visibleAfterMs)} ms before the claim, among its lane's 2 x claimed oldest; one taken by another worker's claim overlapping it, ± ${fmt(bounds.concurrentMs)} ms, excused)`,
    judged: { n: withChoice, what: 'claims made while a job of another priority waited' },
    ...(passedOver.length ? { examples: firstN(passedOver) } : {}),
  };
}

/** Pauses by queue on the database clock (a pause never resumed lasts to the end). */
function pausedSpans(history: readonly HistoryEvent[]): { queue: string; fromMs: number; toMs: number }[] {
  const spans: { queue: string; fromMs: number; toMs: number }[] = [];
  for (const e of history) {
    if (e.type === 'queue:paused' && e.dbTime !== undefined) spans.push({ queue: e.queue, fromMs: e.dbTime, toMs: Infinity });
    if (e.type === 'queue:resumed' && e.dbTime !== undefined) {
      const open = spans.find((s) => s.queue === e.queue && s.toMs === Infinity);
      if (open) open.toMs = e.dbTime;
    }
  }
  return spans;
}

export const priorityOrder: CheckerDef<PriorityOrderBounds> = {
  name: 'priority-order',
  says: 'at every claim, no due and unclaimed job had a strictly better effective priority (priority aged by its wait) than a job the claim took',
  check: checkPriorityOrder,
  bounds: { visibleAfterMs: 'number', concurrentMs: 'number' },
  defaults: { visibleAfterMs: 250, concurrentMs: 10 },
};
