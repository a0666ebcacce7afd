import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { cuts, cutWindows, holdsOf, longestLeaseMs } from './fault-windows.ts';
import { firstN, fmt, maxOf, type CheckerDef } from './types.ts';

export interface RecoversAfterHealBounds {
  /** The rescuer's period, ms (the scenario's rescueIntervalMs: from-scenario fills it in). */
  rescueIntervalMs: number;
  /** Slack on top of lease + rescue, ms: a liveness period, a claim round trip, reports crossing the harness's IPC. */
  slackMs: number;
}

/**
 * After a partition heals or a database-host fault ends, every job a cut-off
 * worker held as the fault began is free to run again (its lease rescued, or
 * claimed anew by any worker) or finished (its holder completed it, or
 * failed it) within
 * lease + rescue interval + slack of the heal, the lease being the longest a
 * worker reported (worker:settings). A job that moved on during the fault
 * counts as recovered at once. That two holders never overlap is
 * no-concurrent-claim's to judge, across the partition as anywhere. Unknown
 * with no cut-off worker holding anything.
 */
export function checkRecoversAfterHeal(history: readonly HistoryEvent[], final: FinalState, bounds: RecoversAfterHealBounds): InvariantResult {
  const windows = cutWindows(history);
  const leaseMs = longestLeaseMs(history);
  const boundMs = (leaseMs ?? Number.NaN) + bounds.rescueIntervalMs + bounds.slackMs;
  const holds = holdsOf(history);
  const done = new Map(final.jobs.map((j) => [j.id, j.state]));
  const late: unknown[] = [];
  const recoveryMs: number[] = [];
  let judged = 0;
  for (const w of windows) {
    const held = holds.filter((h) => cuts(w, h.node) && h.claimT <= w.fromT && h.endT > w.fromT);
    for (const h of held) {
      judged++;
      // Free to run again: the rescue that took the lease back, a later claim (any worker, a later attempt), or the
      // holder's own end of it. From then on the job waits its turn in the queue like any other, which oldest-age-slo judges.
      const next = holds.find((o) => o.jobId === h.jobId && o.claimT > h.claimT && o !== h);
      const rescue = history.find((r) => r.type === 'lease:rescued' && r.jobId === h.jobId && r.t > h.claimT);
      const movedT = Math.min(next?.claimT ?? Number.POSITIVE_INFINITY, rescue?.t ?? Number.POSITIVE_INFINITY, h.end && h.end.type !== 'lease:lost' ? h.endT : Number.POSITIVE_INFINITY);
      const afterMs = Number.isFinite(movedT) ? Math.max(0, movedT - w.toT) : Number.POSITIVE_INFINITY;
      // A job that ended done or dead with no later claim seen (its completion's answer delayed past the report) is not stuck.
      if (!Number.isFinite(afterMs) && (done.get(h.jobId) === 'done' || done.get(h.jobId) === 'dead')) continue;
      recoveryMs.push(afterMs);
      if (!(afterMs <= boundMs)) late.push({ jobId: h.jobId, heldBy: h.node, attempt: h.attempt, fault: w.fault, healedAtT: w.toT, runningAgainAfterMs: Number.isFinite(afterMs) ? afterMs : 'never' });
    }
  }
  const figure =
    `${fmt(late.length)} of ${fmt(judged)} jobs held by a cut-off worker not running again within the bound after the heal` +
    (recoveryMs.length ? `; slowest ${fmt(maxOf(recoveryMs.filter(Number.isFinite)))} ms after the heal` : '') +
    ` (${fmt(windows.length)} partitions and database-host faults)`;
  const bound = `lease ${leaseMs === undefined ? '?' : fmt(leaseMs)} ms + rescue ${fmt(bounds.rescueIntervalMs)} ms + slack ${fmt(bounds.slackMs)} ms after the heal`;
  const base = { name: 'recovers-after-heal', figure, bound, judged: { n: judged, what: 'jobs held by a cut-off worker' } };
  if (leaseMs === undefined) return { ...base, pass: 'unknown', figure: `${figure}; no worker:settings in the history` };
  if (late.length) return { ...base, pass: false, examples: firstN(late) };
  return { ...base, pass: judged > 0 ? true : 'unknown' };
}

export const recoversAfterHeal: CheckerDef<RecoversAfterHealBounds> = {
  name: 'recovers-after-heal',
  says: 'after a partition heals or a database-host fault ends, every job a cut-off worker held is running again within lease + rescue + slack',
  check: checkRecoversAfterHeal,
  bounds: { rescueIntervalMs: 'number', slackMs: 'number' },
  defaults: { rescueIntervalMs: 1_000, slackMs: 2_000 },
};
