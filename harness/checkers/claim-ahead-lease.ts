import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { Fleetline, jobLives } from './lives.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface ClaimAheadLeaseBounds {
  /** Slack on the database clock, ms, for comparing a lease's end with the instant it was renewed or the job started. Default 50. */
  slackMs: number;
}

/**
 * A job claimed ahead keeps its lease while it waits for a slot in a live
 * worker (docs/configuration.md, `claimAhead`: "heartbeated while they
 * wait"). For every claim whose job started later than its lease would have
 * ended unrenewed (the wait from claim to `job:started`, on the worker's own
 * clock, longer than the queue's `leaseMs`), the lease must have been held
 * all along: each renewal recorded before the start came before the lease
 * it extended had ended, and the last one reached past the start (the
 * claim's database instant plus the wait). A lease lapsed while its job
 * waited is one the rescuer may take back from a worker that is alive and
 * then runs the job anyway. A job the worker gave up unrun because no
 * renewal kept its lease (`lease:lost`, phase `expired`, before any start)
 * after waiting longer than the lease lapsed too: the engine refuses to start
 * a job whose lease may have ended, so that is where an unrenewed wait shows.
 * Waits across a freeze of the worker, or of a queue without heartbeats (no
 * claim-ahead), are not judged. Judged: the claimed-ahead waits longer than
 * the lease; unknown with none.
 */
export function checkClaimAheadLease(history: readonly HistoryEvent[], _final: FinalState, bounds: ClaimAheadLeaseBounds): InvariantResult {
  const fleet = new Fleetline(history);
  const startOf = new Map<string, { e: Extract<HistoryEvent, { type: 'job:started' }>; i: number }>();
  history.forEach((e, i) => {
    const key = e.type === 'job:started' ? `${e.jobId}/${e.attempt}/${e.workerId}` : '';
    if (key && !startOf.has(key)) startOf.set(key, { e: e as Extract<HistoryEvent, { type: 'job:started' }>, i });
  });
  const lapsed: unknown[] = [];
  let judged = 0;
  for (const life of jobLives(history).values()) {
    for (const h of life.holds) {
      const c = h.claim;
      const s = fleet.queueSettings(c.workerId, c.queue);
      if (!s || !(s.heartbeatMs > 0) || c.dbTime === undefined || c.leaseExpiresAt === undefined || c.nodeTime === undefined) continue;
      const started = startOf.get(`${c.jobId}/${c.attempt}/${c.workerId}`);
      const start = started && started.i > h.i ? started : undefined;
      const givenUp = !start && h.lost?.e.phase === 'expired' ? h.lost : undefined;
      const waited = start ?? givenUp;
      if (!waited || waited.e.nodeTime === undefined) continue;
      const waitMs = waited.e.nodeTime - c.nodeTime;
      if (waitMs <= s.leaseMs || fleet.frozenBetween(c.node, c.t, waited.e.t)) continue;
      judged++;
      if (givenUp) {
        lapsed.push({ jobId: c.jobId, attempt: c.attempt, workerId: c.workerId, waitedMs: waitMs, leaseMs: s.leaseMs, givenUpUnrun: true });
        continue;
      }
      let end = c.leaseExpiresAt;
      let gap: number | null = null;
      for (const r of h.renewals) {
        if (r.i > waited.i || r.e.dbTime === undefined) continue;
        if (r.e.dbTime > end + bounds.slackMs && gap === null) gap = r.e.dbTime - end;
        end = Math.max(end, r.e.leaseExpiresAt);
      }
      const startDb = c.dbTime + waitMs;
      if (gap !== null || end + bounds.slackMs < startDb) {
        lapsed.push({ jobId: c.jobId, attempt: c.attempt, workerId: c.workerId, waitedMs: waitMs, leaseMs: s.leaseMs, leaseEndedBeforeStartByMs: Math.round(startDb - end), ...(gap !== null ? { renewedLateByMs: gap } : {}) });
      }
    }
  }
  return {
    name: 'claim-ahead-lease',
    pass: lapsed.length > 0 ? false : judged > 0 ? true : 'unknown',
    figure: `${fmt(lapsed.length)} of ${fmt(judged)} claimed-ahead waits longer than the lease let it lapse before the job started (or was given up unrun)`,
    bound: `0 lapsed (renewed before each lease ended, ± ${fmt(bounds.slackMs)} ms)`,
    judged: { n: judged, what: 'claimed-ahead waits longer than the lease' },
    ...(lapsed.length ? { examples: firstN(lapsed) } : {}),
  };
}

export const claimAheadLease: CheckerDef<ClaimAheadLeaseBounds> = {
  name: 'claim-ahead-lease',
  says: 'a job claimed ahead that waits for a slot longer than its lease keeps the lease (renewed while it waits)',
  check: checkClaimAheadLease,
  bounds: { slackMs: 'number' },
  defaults: { slackMs: 50 },
};
