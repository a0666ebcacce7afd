import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { Fleetline, jobLives, type Hold, type JobLife } from './lives.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

/** No bounds: one write by a holder that lost its lease is one too many. */
export type LeaseFencingBounds = Record<string, never>;

/** Where the lease of `h` was taken from it: its rescue, else the next claim of the job by someone else. */
function takeoverOf(life: JobLife, h: Hold): { i: number; t: number; dbTime?: number } | undefined {
  if (h.rescued) return { i: h.rescued.i, t: h.rescued.e.t, dbTime: h.rescued.e.dbTime };
  const next = life.holds.find((o) => o.i > h.i && o.claim.workerId !== h.claim.workerId);
  if (!next || h.failed || h.released || h.deferred || (h.completed && h.completed.i < next.i)) return undefined;
  return { i: next.i, t: next.claim.t, dbTime: next.claim.dbTime };
}

/**
 * Lease fencing holds everywhere: once a lease is taken from its holder, the
 * holder can write nothing more (no renewal, completion or failure accepted
 * after the takeover: two holders never overlap), and a holder that ran with
 * heartbeats on and was still alive (a worker frozen past its lease, then
 * resumed) learns it: its renewal is refused and its handler aborted, which
 * the engine records as `lease:lost`. A holder killed before it could learn
 * is not judged on that. Unknown when no live heartbeating holder lost a lease.
 */
export function checkLeaseFencing(history: readonly HistoryEvent[], _final: FinalState, _bounds: LeaseFencingBounds): InvariantResult {
  const fleet = new Fleetline(history);
  const overlaps: unknown[] = [];
  const unaware: unknown[] = [];
  let takeovers = 0;
  let judged = 0;
  const phases: Record<string, number> = {};
  for (const life of jobLives(history).values()) {
    for (const h of life.holds) {
      const took = takeoverOf(life, h);
      if (!took) continue;
      takeovers++;
      const who = { jobId: life.jobId, holder: h.claim.workerId, attempt: h.claim.attempt };
      const after = (x: { e: HistoryEvent; i: number } | undefined) =>
        x !== undefined && (x.e.dbTime !== undefined && took.dbTime !== undefined ? x.e.dbTime > took.dbTime : x.i > took.i);
      for (const r of h.renewals) if (after(r)) overlaps.push({ ...who, accepted: 'renewal', renewedAt: r.e.dbTime, takenAt: took.dbTime });
      if (after(h.completed)) overlaps.push({ ...who, accepted: 'completion' });
      if (after(h.failed)) overlaps.push({ ...who, accepted: 'failure' });
      const heartbeating = (fleet.queueSettings(h.claim.workerId, h.claim.queue)?.heartbeatMs ?? 0) > 0;
      // Killed before the takeover, or after it without a word: it could not learn, so it is not judged.
      if (!heartbeating || fleet.exitedBetween(h.claim.node, h.claim.t, took.t)) continue;
      if (!h.lost && fleet.exitedBetween(h.claim.node, took.t, Number.POSITIVE_INFINITY)) continue;
      judged++;
      if (h.lost && h.lost.i > h.i) phases[h.lost.e.phase] = (phases[h.lost.e.phase] ?? 0) + 1;
      else unaware.push({ ...who, why: 'lease taken over while alive with heartbeats on, and no lease:lost recorded' });
    }
  }
  const phaseWords = Object.entries(phases).map(([p, n]) => `${fmt(n)} at ${p}`).join(', ');
  const base = {
    name: 'lease-fencing',
    bound: '0 writes after a takeover; every live heartbeating holder records lease:lost',
    judged: { n: judged, what: 'leases taken from a live heartbeating holder' },
    figure:
      `${fmt(overlaps.length)} writes accepted after a takeover (of ${fmt(takeovers)} takeovers); ` +
      `${fmt(judged - unaware.length)} of ${fmt(judged)} live heartbeating holders recorded lease:lost` + (phaseWords ? ` (${phaseWords})` : ''),
  };
  const examples = [...firstN(overlaps).map((x) => ({ overlap: x })), ...firstN(unaware).map((x) => ({ unaware: x }))];
  if (examples.length) return { ...base, pass: false, examples };
  return { ...base, pass: judged > 0 ? true : 'unknown' };
}

export const leaseFencing: CheckerDef<LeaseFencingBounds> = {
  name: 'lease-fencing',
  says: 'a holder whose lease was taken writes nothing more (renewal, completion, failure), and a live heartbeating one records lease:lost',
  check: checkLeaseFencing,
  bounds: {},
  defaults: {},
};
