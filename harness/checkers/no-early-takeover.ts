import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { Fleetline, jobLives, leaseEnd, type ExpiryCause } from './lives.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface NoEarlyTakeoverBounds {
  /**
   * Slack on the database clock, ms, for comparing the rescue's instant with
   * the lease end the history reconstructs (both are truncated to ms). Default 1.
   */
  slackMs: number;
}

/**
 * A lease is taken back only after it expired, and every redelivery has a
 * recorded cause. For each claim after a job's first (a redelivery), the
 * previous hold must have ended by one of:
 *
 * - a failure its holder reported (the retry);
 * - a hand-back at shutdown (`lease:released`), or of a retry whose effect
 *   another holder's open transaction still held (`job:deferred`);
 * - an expiry: the rescuer took the lease back at or after its end on the
 *   database clock (the end as the claim and the holder's renewals set it, and
 *   as the rescuer itself read it), or, with no rescue recorded, the new
 *   claim came after that end; and the expiry itself has a cause: the holder
 *   was killed or frozen meanwhile, ran with heartbeats off (a stall), or the
 *   database was taken away meanwhile (a restart, terminated connections).
 *
 * A redelivery with none of those fails the run even when its effect was
 * absorbed: an engine that hands out live leases is broken whatever the dedup
 * store saved. Unknown when nothing was redelivered or rescued.
 */
export function checkNoEarlyTakeover(history: readonly HistoryEvent[], _final: FinalState, bounds: NoEarlyTakeoverBounds): InvariantResult {
  const fleet = new Fleetline(history);
  const early: unknown[] = [];
  const unexplained: unknown[] = [];
  const causes: Record<'failure' | 'hand-back' | 'deferral' | ExpiryCause, number> = { failure: 0, 'hand-back': 0, deferral: 0, kill: 0, freeze: 0, stall: 0, outage: 0, 'clock-step': 0, 'cut-off': 0, 'slow-clock': 0 };
  let redeliveries = 0;
  let rescues = 0;
  const noSettings = fleet.allSettings().length === 0;

  for (const life of jobLives(history).values()) {
    // Every rescue: after the lease's end, by both accounts.
    for (const r of life.rescues) {
      rescues++;
      const h = [...life.holds].reverse().find((x) => x.rescued === r);
      const end = h ? leaseEnd(h, r) : undefined;
      const at = r.e.dbTime;
      if (at === undefined) continue;
      const ends = [end, r.e.leaseExpiredAt].filter((x): x is number => x !== undefined);
      const latest = Math.max(...ends);
      if (ends.length && at + bounds.slackMs < latest) {
        early.push({ jobId: life.jobId, rescuedAt: at, leaseEnd: latest, earlyByMs: latest - at, owner: r.e.owner ?? h?.claim.workerId });
      }
    }
    // Every redelivery: explained by how the previous hold ended.
    life.holds.forEach((h, n) => {
      if (n === 0) return;
      redeliveries++;
      const prev = life.holds[n - 1];
      if (prev.failed) return void causes.failure++;
      if (prev.released) return void causes['hand-back']++;
      if (prev.deferred) return void causes.deferral++;
      const end = leaseEnd(prev, prev.rescued ?? { e: h.claim, i: h.i });
      const takenAt = prev.rescued?.e.dbTime ?? h.claim.dbTime;
      if (!prev.rescued && end !== undefined && takenAt !== undefined && takenAt + bounds.slackMs < end) {
        early.push({ jobId: life.jobId, reclaimedAt: takenAt, leaseEnd: end, earlyByMs: end - takenAt, heldBy: prev.claim.workerId, claimedBy: h.claim.workerId });
        return;
      }
      const cause = fleet.expiryCause(prev, prev.rescued?.e.t ?? h.claim.t);
      if (cause) return void causes[cause]++;
      unexplained.push({
        jobId: life.jobId,
        heldBy: prev.claim.workerId,
        attempt: prev.claim.attempt,
        redeliveredTo: h.claim.workerId,
        how: prev.rescued ? 'rescued while its holder was alive, running and heartbeating' : 'claimed again with no failure, hand-back or rescue recorded',
      });
    });
  }
  const base = {
    name: 'no-early-takeover',
    bound: '0 takeovers before expiry, 0 unexplained redeliveries',
    judged: { n: redeliveries + rescues, what: 'redeliveries and rescues' },
    figure:
      `${fmt(early.length)} taken back before their lease ended and ${fmt(unexplained.length)} unexplained, of ${fmt(redeliveries)} redeliveries and ${fmt(rescues)} rescues; ` +
      `causes: ${Object.entries(causes).map(([k, v]) => `${fmt(v)} ${k}`).join(', ')}`,
  };
  // Without the workers' settings a stall (heartbeats off) cannot be told from an unexplained expiry.
  if (noSettings) return { ...base, pass: 'unknown', figure: `${base.figure}; no worker:settings in the history (a run recorded before they were)` };
  const examples = [...firstN(early).map((x) => ({ early: x })), ...firstN(unexplained).map((x) => ({ unexplained: x }))];
  if (examples.length) return { ...base, pass: false, examples };
  return { ...base, pass: redeliveries + rescues > 0 ? true : 'unknown' };
}

export const noEarlyTakeover: CheckerDef<NoEarlyTakeoverBounds> = {
  name: 'no-early-takeover',
  says: 'a lease is taken back only after it expired on the database clock, and every redelivery has a recorded cause (kill, freeze, stall, outage, failure, hand-back)',
  check: checkNoEarlyTakeover,
  bounds: { slackMs: 'number' },
  defaults: { slackMs: 1 },
};
