import type { EventOf, FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { sameHold } from './lives.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

/** No bounds: one stale completion is one too many. */
export type NoStaleCompletionBounds = Record<string, never>;

/**
 * No completion is accepted from a worker that lost its lease (lease fencing).
 *
 * A `job:completed` by worker W for attempt a is stale when, after W's claim of
 * that attempt and before the completion, either the job was claimed again
 * (by another worker, or as a later attempt: the lease was taken over), or W
 * itself reported `lease:lost` for that attempt. A completion is the engine's
 * report that it committed, so a stale one is an overwrite of the new owner.
 * Order is history order, which the runner appends as events arrive. A claim,
 * a completion and a lost lease carry the hold's fencing token: a claim made
 * again with the same attempt number by the same worker (a hand-back, a claim
 * a failover lost) is another hold, told apart by its token.
 */
export function checkNoStaleCompletion(history: readonly HistoryEvent[], _final: FinalState, _bounds: NoStaleCompletionBounds): InvariantResult {
  const claims = new Map<number, { e: EventOf<'job:claimed'>; i: number }[]>();
  const lost = new Map<number, { e: EventOf<'lease:lost'>; i: number }[]>();
  const stale: unknown[] = [];
  let completions = 0;
  let unmatched = 0;
  history.forEach((e, i) => {
    if (e.type === 'job:claimed') claims.set(e.jobId, [...(claims.get(e.jobId) ?? []), { e, i }]);
    else if (e.type === 'lease:lost') lost.set(e.jobId, [...(lost.get(e.jobId) ?? []), { e, i }]);
    else if (e.type === 'job:completed') {
      completions++;
      const list = claims.get(e.jobId) ?? [];
      const own = [...list].reverse().find((c) => sameHold(c.e, e));
      if (!own) {
        unmatched++;
        return;
      }
      // Any later claim is another hold: by its token, or by its worker or attempt when the run recorded no tokens.
      const takeover = list.find((c) => c.i > own.i && !sameHold(c.e, e));
      const lostAfter = (lost.get(e.jobId) ?? []).some((l) => l.i > own.i && sameHold(own.e, l.e));
      if (takeover) {
        stale.push({ jobId: e.jobId, completedBy: e.workerId, attempt: e.attempt, takenOverBy: takeover.e.workerId, takeoverAttempt: takeover.e.attempt });
      } else if (lostAfter) {
        stale.push({ jobId: e.jobId, completedBy: e.workerId, attempt: e.attempt, afterLeaseLost: true });
      }
    }
  });
  return {
    name: 'no-stale-completion',
    pass: stale.length > 0 ? false : completions === 0 ? 'unknown' : true,
    figure: `${fmt(stale.length)} completions accepted after the lease was taken over, of ${fmt(completions)}` + (unmatched ? ` (${fmt(unmatched)} with no recorded claim)` : ''),
    bound: '0',
    // A completion with no recorded claim cannot be placed against a takeover: not judged.
    judged: { n: completions - unmatched, what: 'completions' },
    ...(stale.length ? { examples: firstN(stale) } : {}),
  };
}

export const noStaleCompletion: CheckerDef<NoStaleCompletionBounds> = {
  name: 'no-stale-completion',
  says: 'no completion is accepted from a worker whose lease was taken over',
  check: checkNoStaleCompletion,
  bounds: {},
  defaults: {},
};
