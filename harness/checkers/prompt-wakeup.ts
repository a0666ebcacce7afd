import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, maxOf, percentile, type CheckerDef } from './types.ts';

export interface PromptWakeupBounds {
  /** Longest a job due while a worker listened may wait to be claimed, database clock (due to claim). Default 1,000 ms. */
  maxStartMs: number;
  /** Longest a worker may go without listening again after a fault severed its connections. Default 5,000 ms. */
  relistenMs: number;
  /** Jobs due this long after any fault are not judged: the fault's own disruption. Default 2,000 ms. */
  settleMs: number;
  /** The fleet's poll fallback (derived from the scenario): a poll this close to maxStartMs would pass without any wake-up. */
  pollMs: number;
  /** Fewer jobs judged than this is inconclusive. Default 10. */
  minJudged: number;
}

/** Faults that cut every worker connection, the LISTEN one included. */
const SEVERING = new Set(['db-terminate-backends', 'db-restart']);

/**
 * Idle workers wake when a job is enqueued, not when their poll comes round:
 * the enqueue trigger NOTIFYs, each worker LISTENs, and a wake-up claims at
 * once. Judged in a quiet fleet whose poll fallback (`pollMs`) is far longer
 * than `maxStartMs`, with jobs far enough apart that a worker's own looks
 * after an empty claim (10 ms, then twice as late each time) are seconds
 * apart too, so only a wake-up can start a job in time:
 *  - every job enqueued due at once, while some worker had reported
 *    `worker:listening`, is claimed within `maxStartMs` of its run_at (both on
 *    the database clock); jobs due within `settleMs` after a fault, or within
 *    `maxStartMs` before one, are left out;
 *  - after each fault that severs the workers' connections, every worker
 *    that was listening listens again within `relistenMs` (its process still alive).
 * Unknown when the poll alone could meet the bound, or when too few jobs were judged.
 */
export function checkPromptWakeup(history: readonly HistoryEvent[], _final: FinalState, bounds: PromptWakeupBounds): InvariantResult {
  const { maxStartMs, relistenMs, settleMs, pollMs, minJudged } = bounds;
  const faults = history.filter((e) => e.type === 'fault:injected' && e.detail.phase !== 'end');
  const listened = history.filter((e): e is Extract<HistoryEvent, { type: 'worker:listening' }> => e.type === 'worker:listening');
  const firstListenT = listened.length ? listened[0].t : Number.POSITIVE_INFINITY;
  const claimedAt = new Map<number, { dbTime: number; workerId: string }>();
  for (const e of history) {
    if (e.type === 'job:claimed' && e.dbTime !== undefined && !claimedAt.has(e.jobId)) claimedAt.set(e.jobId, { dbTime: e.dbTime, workerId: e.workerId });
  }

  const waits: number[] = [];
  const late: unknown[] = [];
  let neverClaimed = 0;
  for (const e of history) {
    if (e.type !== 'enqueue:ok' || (e.delayMs ?? 0) > 0) continue;
    if (e.t < firstListenT) continue;
    if (faults.some((f) => e.t >= f.t - maxStartMs && e.t <= f.t + settleMs)) continue;
    const claim = claimedAt.get(e.jobId);
    if (!claim) {
      neverClaimed++;
      continue;
    }
    const waitMs = claim.dbTime - e.runAt;
    waits.push(waitMs);
    if (waitMs > maxStartMs) late.push({ jobId: e.jobId, dueAtT: e.t, waitedMs: Math.round(waitMs), claimedBy: claim.workerId });
  }

  // Relisten: each worker listening before a severing fault listens again soon after it, unless its process exited.
  const deaf: unknown[] = [];
  let severed = 0;
  let slowestRelistenMs = 0;
  for (const f of faults) {
    if (f.type !== 'fault:injected' || !SEVERING.has(f.fault)) continue;
    severed++;
    const before = new Map<string, { node: string; t: number }>();
    for (const l of listened) if (l.t < f.t) before.set(l.workerId, { node: l.node, t: l.t });
    for (const [workerId, last] of before) {
      // Its process (a slot's node, reused by the next incarnation) exited after it last listened: nothing left to listen.
      const exited = history.some((x) => x.type === 'process:exited' && x.node === last.node && x.t > last.t && x.t <= f.t + relistenMs);
      if (exited) continue;
      const again = listened.find((l) => l.workerId === workerId && l.t > f.t);
      const afterMs = again ? again.t - f.t : Number.POSITIVE_INFINITY;
      if (afterMs > relistenMs) deaf.push({ workerId, fault: f.fault, faultAtT: f.t, listenedAgainAfterMs: again ? Math.round(afterMs) : null });
      else slowestRelistenMs = Math.max(slowestRelistenMs, afterMs);
    }
  }

  const figure =
    `${fmt(late.length)} of ${fmt(waits.length)} jobs due while a worker listened waited over the bound` +
    (waits.length ? ` (due to claim p50 ${fmt(percentile(waits, 50))} ms, p99 ${fmt(percentile(waits, 99))} ms, max ${fmt(maxOf(waits))} ms; poll ${fmt(pollMs)} ms)` : '') +
    (neverClaimed ? `, ${fmt(neverClaimed)} never claimed` : '') +
    `; ${fmt(severed)} severing faults: ${deaf.length ? `${fmt(deaf.length)} workers did not listen again in time` : `every worker listened again${severed ? ` within ${fmt(slowestRelistenMs)} ms` : ''}`}`;
  const base = {
    name: 'prompt-wakeup',
    bound: `due to claim <= ${fmt(maxStartMs)} ms while a worker listens; listening again <= ${fmt(relistenMs)} ms after a severing fault`,
    figure,
    judged: { n: waits.length, what: 'jobs due while a worker listened' },
  };
  if (late.length || deaf.length) return { ...base, pass: false, examples: firstN([...deaf, ...late]) };
  if (pollMs <= 2 * maxStartMs) return { ...base, figure: `${figure}; inconclusive: a poll of ${fmt(pollMs)} ms meets the bound without any wake-up`, pass: 'unknown' };
  if (waits.length < minJudged) return { ...base, figure: `${figure}; inconclusive: fewer than ${fmt(minJudged)} jobs to judge`, pass: 'unknown' };
  return { ...base, pass: true };
}

export const promptWakeup: CheckerDef<PromptWakeupBounds> = {
  name: 'prompt-wakeup',
  says: 'an idle fleet claims a job as it is enqueued (NOTIFY), not at its poll, and listens again after its connections are cut',
  check: checkPromptWakeup,
  bounds: { maxStartMs: 'number', relistenMs: 'number', settleMs: 'number', pollMs: 'number', minJudged: 'number' },
  defaults: { maxStartMs: 1_000, relistenMs: 5_000, settleMs: 2_000, pollMs: 1_000, minJudged: 10 },
};
