import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { jobLives } from './lives.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

/** No bounds: one attempt started before it was due is one too many. */
export type NoEarlyStartBounds = Record<string, never>;

/**
 * No attempt is claimed before it is due, on the database clock. A claim's
 * due instant is the latest of what the history says about it: the `run_at`
 * the claim returned and, independent of the claim query, the `run_at` the
 * enqueue acknowledged (first attempt) and the `retryAt` the previous
 * attempt's failure or deferral scheduled (a retry in backoff). Rows a cron node
 * wrote ahead carry their occurrence as `run_at`, so they are judged too.
 *
 * Only claims that could have been early tell anything: a retry whose
 * backoff was above 0, a delayed job, a cron row (written ahead of its
 * occurrence). With none of those (every job due the moment it was written)
 * the answer is unknown.
 */
export function checkNoEarlyStart(history: readonly HistoryEvent[], final: FinalState, _bounds: NoEarlyStartBounds): InvariantResult {
  const cronRows = new Set(final.jobs.filter((j) => j.idempotencyKey?.startsWith('cron:')).map((j) => j.id));
  const enqueued = new Map<number, { runAt: number; delayed: boolean }>();
  for (const e of history) if (e.type === 'enqueue:ok') enqueued.set(e.jobId, { runAt: e.runAt, delayed: (e.delayMs ?? 0) > 0 });
  const early: unknown[] = [];
  let judged = 0;
  let retries = 0;
  let delayed = 0;
  let cron = 0;
  let worstMs = 0;
  for (const life of jobLives(history).values()) {
    life.holds.forEach((h, n) => {
      const c = h.claim;
      if (c.dbTime === undefined) return;
      judged++;
      const sources: { due: number; why: string }[] = [{ due: c.runAt, why: 'run_at at claim' }];
      const prev = life.holds[n - 1];
      const backoff = prev?.failed?.e;
      if (backoff && backoff.dbTime !== undefined && backoff.retryAt > backoff.dbTime) {
        retries++;
        sources.push({ due: backoff.retryAt, why: `retry after attempt ${backoff.attempt}` });
      }
      const deferral = prev?.deferred?.e;
      if (deferral) sources.push({ due: deferral.retryAt, why: 'retry after a deferral' });
      const enq = n === 0 ? enqueued.get(c.jobId) : undefined;
      if (enq) {
        if (enq.delayed) delayed++;
        sources.push({ due: enq.runAt, why: 'run_at at enqueue' });
      }
      if (n === 0 && cronRows.has(c.jobId)) cron++;
      const latest = sources.reduce((a, b) => (b.due > a.due ? b : a));
      if (c.dbTime < latest.due) {
        worstMs = Math.max(worstMs, latest.due - c.dbTime);
        early.push({ jobId: c.jobId, attempt: c.attempt, workerId: c.workerId, claimedAt: c.dbTime, dueAt: latest.due, earlyByMs: latest.due - c.dbTime, due: latest.why });
      }
    });
  }
  const telling = retries + delayed + cron;
  const base = {
    name: 'no-early-start',
    bound: '0 claims before due (database clock)',
    judged: { n: telling, what: 'claims that could have been early (retries in backoff, delayed jobs, cron rows)' },
    figure:
      `${fmt(early.length)} of ${fmt(judged)} claims before their run_at` +
      (early.length ? ` (worst ${fmt(worstMs)} ms early)` : '') +
      `; judged ${fmt(retries)} retries in backoff, ${fmt(delayed)} delayed jobs, ${fmt(cron)} cron rows`,
  };
  if (early.length) return { ...base, pass: false, examples: firstN(early) };
  return { ...base, pass: telling > 0 ? true : 'unknown' };
}

export const noEarlyStart: CheckerDef<NoEarlyStartBounds> = {
  name: 'no-early-start',
  says: 'no attempt is claimed before its run_at on the database clock: retries in backoff, delayed jobs, rows written ahead',
  check: checkNoEarlyStart,
  bounds: {},
  defaults: {},
};
