import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { Fleetline, jobLives } from './lives.ts';
import { firstN, fmt, median, type CheckerDef } from './types.ts';

export interface ParametersHonouredBounds {
  /** Clock slack for exact figures (a lease's length, a delay's ends), ms: instants are truncated to ms. Default 2. */
  slackMs: number;
  /** How much later than heartbeatMs the median renewal gap of one worker process (per queue) may be, ms (a loaded machine runs timers late). Default 250. */
  heartbeatLateMs: number;
}

/**
 * Every documented parameter is what the worker did, judged against the
 * settings each worker reported for itself (`worker:settings`):
 *
 * - retry delays: each failure that scheduled a retry waited
 *   `retryAt − failedAt` (one statement's now(), database clock) within
 *   [0, min(backoffCapMs, backoffBaseMs · 2^(attempt−1))];
 * - leases: every claim and every renewal set the lease to end exactly
 *   leaseMs after its own instant;
 * - heartbeats: no renewal came sooner than heartbeatMs after the claim or
 *   the previous renewal, and each worker process's median gap (per queue,
 *   first renewals after a claim and later ones apart) is at most
 *   heartbeatMs + heartbeatLateMs. Gaps across a freeze of the worker, or a
 *   step of the database clock, are left out.
 *
 * Unknown when none of the three had anything to judge, or without settings.
 */
/** One worker process's renewal gaps on one queue: claim to first renewal, or renewal to renewal. */
interface Cadence {
  workerId: string;
  queue: string;
  gap: 'first' | 'later';
  heartbeatMs: number;
  gaps: number[];
}

export function checkParametersHonoured(history: readonly HistoryEvent[], _final: FinalState, bounds: ParametersHonouredBounds): InvariantResult {
  const fleet = new Fleetline(history);
  const bad: { what: string; [k: string]: unknown }[] = [];
  const dead = new Set(history.flatMap((e) => (e.type === 'job:dead' ? [`${e.jobId}/${e.attempt}`] : [])));
  let delays = 0;
  let leases = 0;
  let gapsJudged = 0;
  const medians: number[] = [];
  const cadences = new Map<string, Cadence>();
  for (const e of history) {
    if (e.type !== 'job:failed' || e.dbTime === undefined || dead.has(`${e.jobId}/${e.attempt}`)) continue;
    const s = fleet.queueSettings(e.workerId, e.queue);
    if (!s) continue;
    delays++;
    const ceiling = Math.min(s.backoffCapMs, s.backoffBaseMs * 2 ** Math.max(0, e.attempt - 1));
    const delay = e.retryAt - e.dbTime;
    if (delay < -bounds.slackMs || delay > ceiling + bounds.slackMs) bad.push({ what: 'retry delay outside [0, ceiling]', jobId: e.jobId, attempt: e.attempt, delayMs: delay, ceilingMs: ceiling });
  }
  for (const life of jobLives(history).values()) {
    for (const h of life.holds) {
      const s = fleet.queueSettings(h.claim.workerId, h.claim.queue);
      if (!s) continue;
      const who = { jobId: life.jobId, attempt: h.claim.attempt, workerId: h.claim.workerId };
      const leaseOf = (at: number | undefined, end: number | undefined, what: string) => {
        if (at === undefined || end === undefined) return;
        leases++;
        if (Math.abs(end - at - s.leaseMs) > bounds.slackMs) bad.push({ what: `${what} lease of ${fmt(end - at)} ms, configured ${fmt(s.leaseMs)}`, ...who });
      };
      leaseOf(h.claim.dbTime, h.claim.leaseExpiresAt, 'claim');
      for (const r of h.renewals) leaseOf(r.e.dbTime, r.e.leaseExpiresAt, 'renewal');
      if (s.heartbeatMs === 0) {
        if (h.renewals.length) bad.push({ what: 'renewed with heartbeats off', ...who });
        continue;
      }
      const beats = [h.claim, ...h.renewals.map((r) => r.e)];
      // The first renewal and the later ones apart: a schedule that starts late (from the job's start, not its claim) is
      // late on every first renewal only, which long jobs' many later ones would outvote.
      const cadenceOf = (gap: Cadence['gap']) => {
        const key = `${h.claim.workerId}\u0000${h.claim.queue}\u0000${gap}`;
        return cadences.get(key) ?? cadences.set(key, { workerId: h.claim.workerId, queue: h.claim.queue, gap, heartbeatMs: s.heartbeatMs, gaps: [] }).get(key)!;
      };
      for (let k = 1; k < beats.length; k++) {
        const [a, b] = [beats[k - 1], beats[k]];
        if (a.dbTime === undefined || b.dbTime === undefined) continue;
        if (fleet.freezesOf(h.claim.node).some((w) => w.fromT <= b.t && w.toT >= a.t)) continue;
        // Measured on the database clock: a gap across a step of it measures the step, not the heartbeat.
        if (fleet.clockStepBetween(a.t, b.t)) continue;
        const gap = b.dbTime - a.dbTime;
        cadenceOf(k === 1 ? 'first' : 'later').gaps.push(gap);
        if (gap < s.heartbeatMs - bounds.slackMs) bad.push({ what: `renewed ${fmt(gap)} ms after the last, heartbeatMs ${fmt(s.heartbeatMs)}`, ...who });
      }
    }
  }
  // The period, per worker process and queue: one late timer on a busy machine is one gap among many, a slow schedule is all of them.
  for (const c of cadences.values()) {
    if (!c.gaps.length) continue;
    gapsJudged += c.gaps.length;
    const m = median(c.gaps);
    medians.push(m);
    if (m > c.heartbeatMs + bounds.heartbeatLateMs) {
      bad.push({ what: `median ${c.gap === 'first' ? 'first renewal' : 'renewal'} gap ${fmt(m)} ms over ${fmt(c.gaps.length)} renewals, heartbeatMs ${fmt(c.heartbeatMs)}`, workerId: c.workerId, queue: c.queue });
    }
  }
  const base = {
    name: 'parameters-honoured',
    bound: `retry delay in [0, min(cap, base·2^(n−1))]; lease = leaseMs ± ${fmt(bounds.slackMs)} ms; renewal gaps >= heartbeatMs, each worker's median <= heartbeatMs + ${fmt(bounds.heartbeatLateMs)} ms`,
    judged: { n: delays + leases + gapsJudged, what: 'retry delays, lease lengths and heartbeat gaps' },
    figure:
      `${fmt(bad.length)} off their settings; ${fmt(delays)} retry delays, ${fmt(leases)} lease lengths, ${fmt(gapsJudged)} heartbeat gaps judged` +
      (medians.length ? ` (median of the workers' medians ${fmt(median(medians))} ms)` : ''),
  };
  if (!fleet.allSettings().length) return { ...base, pass: 'unknown', figure: `${base.figure}; no worker:settings in the history (a run recorded before they were)` };
  if (bad.length) return { ...base, pass: false, examples: firstN(bad) };
  return { ...base, pass: delays + leases + gapsJudged > 0 ? true : 'unknown' };
}

export const parametersHonoured: CheckerDef<ParametersHonouredBounds> = {
  name: 'parameters-honoured',
  says: "retry delays, lease lengths and heartbeat periods are what each worker's own settings say",
  check: checkParametersHonoured,
  bounds: { slackMs: 'number', heartbeatLateMs: 'number' },
  defaults: { slackMs: 2, heartbeatLateMs: 250 },
};
