import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { operatorActions } from './operator-actions.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export type RedriveRerunsBounds = Record<string, never>;

/**
 * The attempt a job's first sign of life after `dbBefore` (database clock) shows: its claim, or (a poison
 * that killed its worker before its claim was reported) its rescue or failure. By the database's time, not
 * by history order: a claim made the moment after the verb committed can be recorded before the verb is.
 */
function firstAttemptAfter(history: readonly HistoryEvent[], jobId: number, dbBefore: number): { attempt: number; crashCount?: number; via: string } | undefined {
  let best: { at: number; attempt: number; crashCount?: number; via: string } | undefined;
  for (const e of history) {
    if (!('jobId' in e) || e.jobId !== jobId || e.dbTime === undefined || e.dbTime <= dbBefore || (best && best.at <= e.dbTime)) continue;
    if (e.type === 'job:claimed') best = { at: e.dbTime, attempt: e.attempt, crashCount: e.crashCount, via: 'claim' };
    if (e.type === 'lease:rescued') best = { at: e.dbTime, attempt: e.attempts, via: 'rescue' };
    if (e.type === 'job:failed') best = { at: e.dbTime, attempt: e.attempt, via: 'failure' };
  }
  return best;
}

/** The attempt of a job's last failure before `dbBefore`: a retried failed job keeps its budget, so its next claim is one above. */
function lastFailedAttempt(history: readonly HistoryEvent[], jobId: number, dbBefore: number): number | undefined {
  let last: { at: number; attempt: number } | undefined;
  for (const e of history) {
    if (e.type === 'job:failed' && e.jobId === jobId && e.dbTime !== undefined && e.dbTime < dbBefore && (!last || e.dbTime > last.at)) last = { at: e.dbTime, attempt: e.attempt };
  }
  return last?.attempt;
}

/**
 * A redrive reruns exactly what it selected (docs/operating.md: "dead:
 * redriven, fresh attempt budget"; RedriveMany and RedriveDeadLetter set
 * attempts and crash_count to 0). For each job a bulk redrive or a retry
 * moved: it was dead (or, for a retry, failed) just before; a bulk redrive
 * moved only dead letters of its queue whose reason contained its filter,
 * and every other dead letter of the queue is still dead just after; a
 * redriven job's first attempt after is attempt 1 with no crash charged, a
 * retried failed job's is one above its last (its budget kept); and each
 * ends done or dead again. Unknown when nothing was redriven.
 */
export function checkRedriveReruns(history: readonly HistoryEvent[], final: FinalState): InvariantResult {
  const jobs = new Map(final.jobs.map((j) => [j.id, j]));
  const bad: Record<string, unknown>[] = [];
  let moved = 0;
  let fromDead = 0;
  let reran = 0;
  let untouched = 0;
  for (const { a } of operatorActions(history, ['redrive', 'retry'])) {
    if (a.outcome !== 'ok') continue;
    const deadBefore = new Map((a.selection?.deadBefore ?? []).map((d) => [d.jobId, d.reason]));
    if (a.selection) {
      for (const [id, reason] of deadBefore) {
        const selected = a.selection.reasonContains === null || reason.includes(a.selection.reasonContains);
        if (selected) continue;
        untouched++;
        if (a.jobIds.includes(id) || a.after[id] !== 'dead') bad.push({ jobId: id, notSelected: reason, after: a.after[id] });
      }
    }
    for (const id of a.jobIds) {
      moved++;
      const was = a.before[id];
      if (a.verb === 'redrive' && was !== 'dead') bad.push({ jobId: id, redrivenButWas: was });
      if (a.verb === 'retry' && was !== 'dead' && was !== 'failed') bad.push({ jobId: id, retriedButWas: was });
      if (a.selection && deadBefore.has(id) && a.selection.reasonContains !== null && !deadBefore.get(id)!.includes(a.selection.reasonContains)) {
        bad.push({ jobId: id, outsideSelection: deadBefore.get(id) });
      }
      const first = firstAttemptAfter(history, id, a.dbBefore);
      if (!first) {
        bad.push({ jobId: id, neverRanAgain: true });
        continue;
      }
      reran++;
      if (was === 'dead') {
        fromDead++;
        if (first.attempt !== 1 || (first.crashCount ?? 0) !== 0) bad.push({ jobId: id, firstAttemptAfterRedrive: first.attempt, crashCount: first.crashCount, seenAt: first.via });
      } else if (was === 'failed') {
        const last = lastFailedAttempt(history, id, a.dbBefore);
        if (last !== undefined && first.attempt !== last + 1) bad.push({ jobId: id, retriedFailedAttempt: first.attempt, lastFailed: last });
      }
      const end = jobs.get(id)?.state;
      if (end !== 'done' && end !== 'dead') bad.push({ jobId: id, endedAs: end ?? 'missing' });
    }
  }
  return {
    name: 'redrive-reruns',
    pass: bad.length > 0 ? false : fromDead === 0 ? 'unknown' : true,
    figure:
      `${fmt(moved)} jobs redriven or retried (${fmt(fromDead)} from dead), ${fmt(reran)} ran again; ${fmt(untouched)} dead letters outside a selection; ` +
      `${fmt(bad.length)} wrong (not dead before, outside the selection, no fresh budget, never ran, or left unfinished)`,
    bound: 'only what was selected moves; each reruns from attempt 1 (a failed one from its next) and ends done or dead',
    judged: { n: moved + untouched, what: 'redriven or retried jobs and dead letters a redrive had to leave' },
    ...(bad.length ? { examples: firstN(bad) } : {}),
  };
}

export const redriveReruns: CheckerDef<RedriveRerunsBounds> = {
  name: 'redrive-reruns',
  says: 'a redrive or retry moves only what it selected; each reruns from a fresh budget and ends done or dead again',
  check: checkRedriveReruns,
  bounds: {},
  defaults: {},
};
