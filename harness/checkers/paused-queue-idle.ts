import type { EventOf, FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface PausedQueueIdleBounds {
  /**
   * Claims that started this long before a resume's own start are still
   * judged; closer ones are not. A claim statement that began a moment
   * before the resume can wait on the resume's lock and then see the queue
   * running (its dbTime is its start, before the resume's). Default 50 ms.
   */
  resumeSlackMs: number;
}

interface Pause {
  queue: string;
  fromDb: number;
  toDb: number;
}

/** Each queue's paused intervals on the database clock; a pause never resumed lasts to the end. Pure. */
export function pausedIntervals(history: readonly HistoryEvent[]): Pause[] {
  const open = new Map<string, number>();
  const out: Pause[] = [];
  for (const e of history) {
    if (e.type === 'queue:paused' && e.dbTime !== undefined && !open.has(e.queue)) open.set(e.queue, e.dbTime);
    if (e.type === 'queue:resumed' && e.dbTime !== undefined && open.has(e.queue)) {
      out.push({ queue: e.queue, fromDb: open.get(e.queue)!, toDb: e.dbTime });
      open.delete(e.queue);
    }
  }
  for (const [queue, fromDb] of open) out.push({ queue, fromDb, toDb: Infinity });
  return out;
}

/**
 * A paused queue starts nothing while paused: no `job:claimed` of the queue
 * whose claim began (dbTime, the database clock) after the pause took effect
 * and before its resume. pauseQueue returns only once every claim that could
 * have missed the pause has committed, so the bound is exact at the pause end
 * and `resumeSlackMs` wide at the resume. Inconclusive when no pause was
 * recorded, or when the queue never ran a job (nothing to judge).
 */
export function checkPausedQueueIdle(history: readonly HistoryEvent[], _final: FinalState, bounds: PausedQueueIdleBounds): InvariantResult {
  const pauses = pausedIntervals(history);
  const queues = new Set(pauses.map((p) => p.queue));
  const claims = history.filter((e): e is EventOf<'job:claimed'> & { dbTime: number } => e.type === 'job:claimed' && queues.has(e.queue) && e.dbTime !== undefined);
  const inside = claims.filter((c) => pauses.some((p) => p.queue === c.queue && c.dbTime >= p.fromDb && c.dbTime < p.toDb - bounds.resumeSlackMs));
  const pausedMs = pauses.reduce((n, p) => n + (Number.isFinite(p.toDb) ? p.toDb - p.fromDb : 0), 0);
  return {
    name: 'paused-queue-idle',
    pass: inside.length > 0 ? false : pauses.length === 0 || claims.length === 0 ? 'unknown' : true,
    figure: pauses.length
      ? `${fmt(inside.length)} claims while paused (${fmt(pauses.length)} pauses, ${fmt(pausedMs / 1000, 1)} s); ${fmt(claims.length)} claims of the paused queues in all`
      : 'no queue was paused',
    bound: `0 (claims within ${fmt(bounds.resumeSlackMs)} ms before a resume excepted)`,
    judged: { n: claims.length, what: 'claims of paused queues' },
    ...(inside.length ? { examples: firstN(inside).map((c) => ({ jobId: c.jobId, queue: c.queue, dbTime: c.dbTime })) } : {}),
  };
}

export const pausedQueueIdle: CheckerDef<PausedQueueIdleBounds> = {
  name: 'paused-queue-idle',
  says: 'a paused queue starts no job between its pause and its resume',
  check: checkPausedQueueIdle,
  bounds: { resumeSlackMs: 'number' },
  defaults: { resumeSlackMs: 50 },
};
