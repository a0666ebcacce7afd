import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { hostAheadOfDb, jobLives } from './lives.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface KilledHolderChargedBounds {
  /** How long before its lease's end the holder must have died to be judged, ms: one that died at the edge may have been seen alive after it. */
  marginMs: number;
}

/**
 * A job whose worker died holding it is charged a crash when its lease is
 * taken back (docs/crash-accounting.md): the holder is dead, not a live
 * worker that lost its lease. That holds also when the dead process's worker
 * id lives on: a supervisor that restarts a process under the same id
 * (reuseWorkerIds) has the new one renew the id's liveness row while the dead
 * one's leases run out, and the rescuer must see that the row speaks for a
 * later incarnation.
 *
 * Judged: every hold that a recorded rescue took back and whose process
 * exited unexpectedly (killed, crashed; not a clean stop) at least marginMs
 * before its lease's end on the database clock (the claim's and the renewals'
 * expiries, placed on the harness's clock by the smallest gap between an
 * event's host time and its database time): the rescue must be charged
 * (`crashed` true; an engine that does not say is taken as charging every
 * expiry). The figure says how many of them the slot's next process had
 * started before the rescue. Unknown with none.
 */
export function checkKilledHolderCharged(history: readonly HistoryEvent[], _final: FinalState, bounds: KilledHolderChargedBounds): InvariantResult {
  const deaths = new Map<string, number[]>();
  const starts = new Map<string, number[]>();
  const offset = hostAheadOfDb(history);
  for (const e of history) {
    if (e.type === 'process:exited' && e.role === 'worker' && !e.expected) (deaths.get(e.node) ?? deaths.set(e.node, []).get(e.node)!).push(e.t);
    if (e.type === 'process:started' && e.role === 'worker') (starts.get(e.node) ?? starts.set(e.node, []).get(e.node)!).push(e.t);
  }
  const uncharged: unknown[] = [];
  let judged = 0;
  let restarted = 0;
  for (const life of jobLives(history).values()) {
    for (const h of life.holds) {
      const rescue = h.rescued?.e;
      if (!rescue || !Number.isFinite(offset)) continue;
      const ends = [h.claim.leaseExpiresAt, ...h.renewals.map((r) => r.e.leaseExpiresAt)].filter((x): x is number => x !== undefined);
      if (!ends.length) continue;
      const leaseEndT = Math.max(...ends) + offset;
      const died = (deaths.get(h.claim.node) ?? []).find((t) => t >= h.claim.t && t <= rescue.t);
      if (died === undefined || died > leaseEndT - bounds.marginMs) continue;
      judged++;
      const successor = (starts.get(h.claim.node) ?? []).some((t) => t > died && t < rescue.t);
      if (successor) restarted++;
      if (rescue.crashed === false) {
        uncharged.push({ jobId: life.jobId, holder: h.claim.workerId, diedAtT: died, leaseEndedAtT: Math.round(leaseEndT), rescuedAtT: rescue.t, ...(successor ? { slotRestartedBeforeTheRescue: true } : {}) });
      }
    }
  }
  const base = {
    name: 'killed-holder-charged',
    bound: `every lease of a holder that died ${fmt(bounds.marginMs)} ms or more before its end is charged a crash when taken back: 0 uncharged`,
    judged: { n: judged, what: 'leases of a dead holder taken back' },
    figure: `${fmt(uncharged.length)} of ${fmt(judged)} leases of a dead holder taken back without a crash charged (${fmt(restarted)} of them after the slot's next process had started)`,
  };
  if (uncharged.length) return { ...base, pass: false, examples: firstN(uncharged) };
  return { ...base, pass: judged > 0 ? true : 'unknown' };
}

export const killedHolderCharged: CheckerDef<KilledHolderChargedBounds> = {
  name: 'killed-holder-charged',
  says: "a job whose worker died holding it is charged a crash when its lease is taken back, also when a restarted process took the dead one's worker id",
  check: checkKilledHolderCharged,
  bounds: { marginMs: 'number' },
  defaults: { marginMs: 250 },
};
