import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { cuts, cutWindows, holdsOf, longestLeaseMs, type CutWindow, type Hold } from './fault-windows.ts';
import { firstN, fmt, maxOf, type CheckerDef } from './types.ts';

export interface RecoversAfterHealBounds {
  /** The rescuer's period, ms (the scenario's rescueIntervalMs: from-scenario fills it in). */
  rescueIntervalMs: number;
  /** Slack on top of one rescue pass, ms: a reconnect, a claim round trip, reports crossing the harness's IPC. */
  slackMs: number;
  /** A claim reported this soon after the heal was held by the partition and counts as held through it, ms. */
  heldClaimMs: number;
}

/**
 * After a partition heals or a database-host fault ends, no job stays stuck
 * with a cut-off worker: every job that worker held as the window opened
 * (or claimed through it by a request the window held, answered so late,
 * within heldClaimMs of the heal, that the worker gave the claim up) is moving again within one rescue interval + slack of the heal:
 * taken back (rescued, or handed back by its holder), claimed anew, finished
 * by its holder, or renewed by its holder after the heal (it is running). A
 * job already moving before the heal counts at once. Waiting out a whole
 * lease after the heal (a claim nobody runs, a lease nobody renews) fails
 * it. Unknown when no cut-off worker held anything.
 */
export function checkRecoversAfterHeal(history: readonly HistoryEvent[], final: FinalState, bounds: RecoversAfterHealBounds): InvariantResult {
  const windows = cutWindows(history);
  const leaseMs = longestLeaseMs(history);
  const boundMs = bounds.rescueIntervalMs + bounds.slackMs;
  const holds = holdsOf(history);
  const ended = new Map(final.jobs.map((j) => [j.id, j.state]));
  const late: unknown[] = [];
  const recoveryMs: number[] = [];
  let judged = 0;
  for (const w of windows) {
    // Held as the window opened; or claimed through it by a request it held, answered so late that the worker gave the claim up.
    const gaveUp = (h: Hold) => h.end?.type === 'lease:lost' && h.end.phase === 'expired';
    const held = holds.filter(
      (h) => cuts(w, h.node) && Number.isFinite(w.toT) && h.endT > w.fromT && (h.claimT <= w.fromT || (h.claimT <= w.toT + bounds.heldClaimMs && gaveUp(h))),
    );
    for (const h of held) {
      judged++;
      const movedT = movingAgainAt(h, w, holds, history);
      const afterMs = Number.isFinite(movedT) ? Math.max(0, movedT - w.toT) : Number.POSITIVE_INFINITY;
      // Ended done or dead with nothing seen moving it (its completion's report lost with a reset) is not stuck.
      if (!Number.isFinite(afterMs) && (ended.get(h.jobId) === 'done' || ended.get(h.jobId) === 'dead')) continue;
      recoveryMs.push(afterMs);
      if (!(afterMs <= boundMs)) late.push({ jobId: h.jobId, heldBy: h.node, attempt: h.attempt, fault: w.fault, healedAtT: w.toT, movingAgainAfterMs: Number.isFinite(afterMs) ? afterMs : 'never' });
    }
  }
  const slowest = maxOf(recoveryMs.filter(Number.isFinite));
  const figure =
    `${fmt(late.length)} of ${fmt(judged)} jobs held by a cut-off worker still stuck after the bound` +
    (Number.isFinite(slowest) ? `; slowest moving again ${fmt(slowest)} ms after the heal` : '') +
    ` (${fmt(windows.length)} partitions and database-host faults${leaseMs === undefined ? '' : `; lease ${fmt(leaseMs)} ms`})`;
  const bound = `moving again within rescue ${fmt(bounds.rescueIntervalMs)} ms + slack ${fmt(bounds.slackMs)} ms of the heal`;
  const base = { name: 'recovers-after-heal', figure, bound, judged: { n: judged, what: 'jobs held by a cut-off worker' } };
  if (late.length) return { ...base, pass: false, examples: firstN(late) };
  return { ...base, pass: judged > 0 ? true : 'unknown' };
}

/** When hold `h`'s job was moving again: taken back, claimed anew, finished by its holder, or renewed by it after the heal. */
function movingAgainAt(h: Hold, w: CutWindow, holds: readonly Hold[], history: readonly HistoryEvent[]): number {
  let t = Number.POSITIVE_INFINITY;
  if (h.end && h.end.type !== 'lease:lost') t = h.endT;
  const next = holds.find((o) => o.jobId === h.jobId && o.claimT > h.claimT);
  if (next) t = Math.min(t, next.claimT);
  for (const e of history) {
    if (e.t >= t || e.t <= w.fromT) continue;
    // A rescue of this hold's lease may come before the claim's report: a claim whose answer the partition held.
    const ours = e.t > h.claimT || (e.type === 'lease:rescued' && e.owner === h.workerId);
    if (!ours) continue;
    if ((e.type === 'lease:rescued' || e.type === 'job:deferred' || e.type === 'lease:released') && e.jobId === h.jobId) t = e.t;
    else if (e.type === 'lease:renewed' && e.jobId === h.jobId && e.node === h.node && e.attempt === h.attempt && e.t > w.toT) t = e.t;
  }
  return t;
}

export const recoversAfterHeal: CheckerDef<RecoversAfterHealBounds> = {
  name: 'recovers-after-heal',
  says: 'after a partition heals or a database-host fault ends, no job stays stuck with a cut-off worker: each is moving again within a rescue interval + slack',
  check: checkRecoversAfterHeal,
  bounds: { rescueIntervalMs: 'number', slackMs: 'number', heldClaimMs: 'number' },
  defaults: { rescueIntervalMs: 1_000, slackMs: 2_000, heldClaimMs: 1_000 },
};
