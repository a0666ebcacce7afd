import type { EventOf, FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { failoverExcused } from './failover.ts';
import { sameHold } from './lives.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface NoConcurrentClaimBounds {
  /**
   * The visibility timeout the workers ran with, in ms. A second claim that
   * comes at least this long after an open claim is a takeover of an expired
   * lease (at-least-once working as designed), not a concurrent claim. 0 (the
   * default) counts every overlap, for runs where the rescuer reports every expiry.
   */
  leaseMs: number;
  /**
   * Leave out the jobs a failover lost an acknowledged write of (a claim the promoted primary never had lets a
   * second worker hold the job beside the first; an id handed out again is claimed at attempt 1 twice): each is
   * listed with its cause by failover-async, which judges it. Every other job is judged. Default false.
   */
  exceptFailoverLosses?: boolean;
}

interface Hold {
  claim: EventOf<'job:claimed'>;
  i: number;
  endI: number | undefined;
}

/**
 * No job is held by two workers at once:
 * 1. no two `job:claimed` of the same job and the same attempt by different workers;
 * 2. no claim of a job while another worker's claim of it is still open.
 *
 * A claim stays open until its worker reports `job:completed`, `job:failed`,
 * `job:deferred`, `lease:released` or `lease:lost` for that attempt, or the job is `job:dead` or `lease:rescued`
 * (the rescuer found the lease expired). Events are taken in history order;
 * the gap between two claims is measured on the database clock when both carry
 * `dbTime` (the runner copies the engine's `dbClaimedAt` there), else harness time.
 */
export function checkNoConcurrentClaim(history: readonly HistoryEvent[], final: FinalState, bounds: NoConcurrentClaimBounds): InvariantResult {
  const excused = bounds.exceptFailoverLosses ? failoverExcused(history, final) : null;
  const open = new Map<number, Hold[]>();
  const sameAttempt: unknown[] = [];
  const overlaps: unknown[] = [];
  const seenAttempt = new Map<string, string>();
  let claims = 0;
  // An attempt whose failure the engine reported was ended by a fenced write that committed before any
  // later attempt could be claimed, whenever its report reached the history (a busy worker's can lag).
  const failed = new Set(history.flatMap((e) => (e.type === 'job:failed' ? [`${e.jobId}/${e.attempt}/${e.workerId}`] : [])));
  // Likewise a hand-back (shutdown's ReleaseJobs, or a deferral): a fenced write that committed before anyone
  // could claim the job again, uncharged, so the next claim takes the same attempt number, legitimately.
  const handedBack = new Set(history.flatMap((e) => (e.type === 'lease:released' || e.type === 'job:deferred' ? [`${e.jobId}/${e.attempt}/${e.workerId}`] : [])));

  // An operator revived a dead job (a redrive, or a retry of a dead one) with a fresh budget: its claims from
  // then on count from attempt 1 again, legitimately (docs/operating.md). Its lives are told apart by the
  // database's time of the claim against the verb's, since a claim can be recorded before the verb is.
  const revived = new Map<number, number[]>();
  for (const e of history) {
    if (e.type !== 'operator:action' || e.outcome !== 'ok' || (e.verb !== 'redrive' && e.verb !== 'retry')) continue;
    for (const id of e.jobIds) if (e.before[id] === 'dead') revived.set(id, [...(revived.get(id) ?? []), e.dbBefore]);
  }
  const lifeOf = (jobId: number, dbTime: number | undefined) => {
    const times = revived.get(jobId);
    return times && dbTime !== undefined ? `/life${times.filter((t) => t < dbTime).length}` : '';
  };
  const exits = history.filter((e) => e.type === 'process:exited');
  const exitedBetween = (node: string, fromT: number, toT: number) => exits.some((x) => x.node === node && x.t >= fromT && x.t <= toT);
  const close = (jobId: number, i: number, match: (h: Hold) => boolean) => {
    for (const h of open.get(jobId) ?? []) if (h.endI === undefined && match(h)) h.endI = i;
  };

  let excusedClaims = 0;
  history.forEach((e, i) => {
    if ('jobId' in e && excused?.jobIds.has(e.jobId)) {
      if (e.type === 'job:claimed') excusedClaims++;
      return;
    }
    switch (e.type) {
      case 'job:claimed': {
        claims++;
        const k = `${e.jobId}/${e.attempt}`;
        const life = lifeOf(e.jobId, e.dbTime);
        const prev = seenAttempt.get(k + life);
        if (prev !== undefined && prev !== e.workerId && !handedBack.has(`${k}/${prev}`)) sameAttempt.push({ jobId: e.jobId, attempt: e.attempt, workers: [prev, e.workerId] });
        seenAttempt.set(k + life, e.workerId);
        const holds = open.get(e.jobId) ?? [];
        for (const h of holds) {
          if (h.endI !== undefined || h.claim.workerId === e.workerId) continue;
          // One clock for both ends: the database's when both carry it, else the harness's.
          const gapMs = e.dbTime !== undefined && h.claim.dbTime !== undefined ? e.dbTime - h.claim.dbTime : e.t - h.claim.t;
          if (e.attempt > h.claim.attempt && failed.has(`${e.jobId}/${h.claim.attempt}/${h.claim.workerId}`)) {
            h.endI = i; // a retry after a recorded failure, reported late
            continue;
          }
          if (exitedBetween(h.claim.node, h.claim.t, e.t)) {
            h.endI = i; // its process died (a poison beside it, a kill) and holds nothing; the reports it had queued died with it
            continue;
          }
          if (handedBack.has(`${e.jobId}/${h.claim.attempt}/${h.claim.workerId}`)) {
            h.endI = i; // handed back before this claim could happen, whenever its report arrived
            continue;
          }
          if (bounds.leaseMs > 0 && gapMs >= bounds.leaseMs) {
            h.endI = i; // the old lease had expired: a legitimate takeover
            continue;
          }
          overlaps.push({ jobId: e.jobId, held: { workerId: h.claim.workerId, attempt: h.claim.attempt, t: h.claim.t }, claimed: { workerId: e.workerId, attempt: e.attempt, t: e.t } });
        }
        holds.push({ claim: e, i, endI: undefined });
        open.set(e.jobId, holds);
        break;
      }
      case 'job:deferred':
      case 'lease:released':
        // Handed back uncharged: the next claim takes the same attempt number again, legitimately.
        for (const key of [...seenAttempt.keys()]) if (key === `${e.jobId}/${e.attempt}` || key.startsWith(`${e.jobId}/${e.attempt}/life`)) seenAttempt.delete(key);
        close(e.jobId, i, (h) => sameHold(h.claim, e));
        break;
      case 'job:completed':
      case 'job:failed':
      case 'lease:lost':
        close(e.jobId, i, (h) => sameHold(h.claim, e));
        break;
      case 'job:dead':
      case 'lease:rescued':
        close(e.jobId, i, () => true);
        break;
    }
  });

  const violations = sameAttempt.length + overlaps.length;
  const examples = [...firstN(sameAttempt), ...firstN(overlaps)];
  return {
    name: 'no-concurrent-claim',
    pass: violations > 0 ? false : claims === 0 ? 'unknown' : true,
    figure:
      `${fmt(sameAttempt.length)} attempts claimed twice and ${fmt(overlaps.length)} overlapping holds over ${fmt(claims)} claims` +
      (excused ? `; ${fmt(excusedClaims)} claims of ${fmt(excused.jobIds.size)} jobs left out (a failover lost a write of each: failover-async lists it)` : ''),
    bound: bounds.leaseMs > 0 ? `0 (takeover after ${fmt(bounds.leaseMs)} ms lease expiry allowed)` : '0',
    judged: { n: claims, what: 'claims' },
    ...(examples.length ? { examples } : {}),
  };
}

export const noConcurrentClaim: CheckerDef<NoConcurrentClaimBounds> = {
  name: 'no-concurrent-claim',
  says: 'no job is held by two workers at once, and no attempt is claimed twice',
  check: checkNoConcurrentClaim,
  bounds: { leaseMs: 'number', exceptFailoverLosses: 'boolean' },
  defaults: { leaseMs: 0, exceptFailoverLosses: false },
};
