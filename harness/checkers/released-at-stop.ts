import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export type ReleasedAtStopBounds = Record<string, never>;

/** A job a worker still ran when its graceful stop's grace ran out, and what became of it. */
interface Held {
  jobId: number;
  attempt: number;
  workerId: string;
  t: number;
}

/**
 * Graceful shutdown, whatever the engine: a worker told to stop (SIGTERM, the
 * `worker-restart` fault) that still runs a job when its grace runs out must
 * not leave that job held: the engine hands it back (stampede's ReleaseJobs,
 * graphile-worker's failJobs, pg-boss's failWip) and it runs again, or it
 * ends done or dead. A job held at the stop that nobody claimed again and
 * that ends still claimed was left to the engine's slow path (graphile-worker's
 * 4-hour lock, a lease that outlives the run): a violation, with the job, the
 * stopped worker and what the worker heard from its engine (`worker:error`).
 * The jobs judged are those the worker reported still running at the grace's
 * end (`fault:evidence` worker-restart, point grace-over) and those it handed
 * back (`lease:released`). Inconclusive when no stop caught a job running.
 */
export function checkReleasedAtStop(history: readonly HistoryEvent[], final: FinalState): InvariantResult {
  const held = new Map<string, Held>();
  const claims = new Map<number, { t: number; workerId: string }[]>();
  const errors = new Map<string, string>();
  for (const e of history) {
    if (e.type === 'fault:evidence' && e.fault === 'worker-restart' && e.detail.point === 'grace-over') {
      const h = { jobId: Number(e.detail.jobId), attempt: Number(e.detail.attempt), workerId: String(e.detail.workerId), t: e.t };
      held.set(`${h.jobId}/${h.workerId}`, h);
    }
    if (e.type === 'lease:released' && !held.has(`${e.jobId}/${e.workerId}`)) held.set(`${e.jobId}/${e.workerId}`, { jobId: e.jobId, attempt: e.attempt, workerId: e.workerId, t: e.t });
    if (e.type === 'job:claimed') (claims.get(e.jobId) ?? claims.set(e.jobId, []).get(e.jobId)!).push({ t: e.t, workerId: e.workerId });
    if (e.type === 'worker:error') errors.set(e.workerId, e.error);
  }
  const stateOf = new Map(final.jobs.map((j) => [j.id, j.state]));
  const leftHeld: unknown[] = [];
  let rerun = 0;
  let finished = 0;
  for (const h of held.values()) {
    const again = (claims.get(h.jobId) ?? []).some((c) => c.t > h.t && c.workerId !== h.workerId);
    const state = stateOf.get(h.jobId);
    if (again) rerun++;
    else if (state === 'done' || state === 'dead') finished++;
    else leftHeld.push({ jobId: h.jobId, attempt: h.attempt, stoppedWorker: h.workerId, finalState: state ?? 'missing', ...(errors.has(h.workerId) ? { engineSaid: errors.get(h.workerId) } : {}) });
  }
  const figure = `${fmt(held.size)} jobs held at a graceful stop's end: ${fmt(rerun)} run again, ${fmt(finished)} ended done or dead, ${fmt(leftHeld.length)} left held`;
  return {
    name: 'released-at-stop',
    pass: leftHeld.length > 0 ? false : held.size === 0 ? 'unknown' : true,
    figure,
    bound: 'every job a stopped worker held is handed back: run again, or ended done or dead',
    judged: { n: held.size, what: "jobs held at a graceful stop's end" },
    ...(leftHeld.length ? { examples: firstN(leftHeld) } : {}),
  };
}

export const releasedAtStop: CheckerDef<ReleasedAtStopBounds> = {
  name: 'released-at-stop',
  says: 'a worker stopped gracefully (SIGTERM) leaves no job held: what it still ran at the grace\'s end runs again or ends done or dead',
  check: checkReleasedAtStop,
  bounds: {},
  defaults: {},
};
