import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { jobLives } from './lives.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export type HandBackBounds = Record<string, never>;

/**
 * Graceful shutdown's promise (engine/worker/worker.ts handBack, ReleaseJobs):
 * a worker told to stop lets its jobs run for the grace, then hands back what
 * is left, uncharged and due at once; it leaves nothing claimed behind. Per
 * `lease:released`: the job's next claim carries the same attempt number (the
 * release gave the attempt back), and the run_at it was claimed at is before
 * the released lease would have ended (ReleaseJobs made it due at once; a job
 * that waited its lease out was not handed back, whatever the backlog made
 * the wait). A job released but never claimed again is lost to the hand-back.
 * When the next holder was killed before it reported its claim, the rescue of
 * its lease stands in: the attempts it reports are what that claim charged. Per worker that exited
 * cleanly (code 0): the rescuer never took a lease back from it, since a
 * drained worker held none. Inconclusive when nothing was handed back.
 */
export function checkHandBack(history: readonly HistoryEvent[], _final: FinalState): InvariantResult {
  const charged: unknown[] = [];
  const late: unknown[] = [];
  const neverRerun: unknown[] = [];
  let released = 0;
  let unreported = 0;
  for (const life of jobLives(history).values()) {
    life.holds.forEach((h, k) => {
      if (!h.released) return;
      released++;
      const next = life.holds.slice(k + 1).find((n) => n.i > h.released!.i) ?? life.holds[k + 1];
      // A holder killed right after its claim never reported it; the rescue of its lease did, with the attempts
      // that claim had charged: the released attempt again if the hand-back gave it back. When it ran is unknown.
      const between = life.rescues.find((r) => r.i > h.released!.i && (!next || r.i < next.i) && r.e.owner !== h.claim.workerId);
      if (between) {
        unreported++;
        if (between.e.attempts !== h.claim.attempt) charged.push({ jobId: life.jobId, releasedAttempt: h.claim.attempt, nextAttempt: between.e.attempts });
        return;
      }
      if (!next) return void neverRerun.push({ jobId: life.jobId, attempt: h.claim.attempt });
      if (next.claim.attempt !== h.claim.attempt) charged.push({ jobId: life.jobId, releasedAttempt: h.claim.attempt, nextAttempt: next.claim.attempt });
      const leaseEnd = Math.max(h.claim.leaseExpiresAt ?? -Infinity, ...h.renewals.map((r) => r.e.leaseExpiresAt));
      if (Number.isFinite(leaseEnd) && next.claim.runAt >= leaseEnd) late.push({ jobId: life.jobId, dueAt: next.claim.runAt, leaseEnd });
    });
  }
  // The worker ids of processes that exited cleanly: the last id that slot claimed with before the exit.
  const drained = new Set<string>();
  const lastIdOf = new Map<string, string>();
  for (const e of history) {
    if (e.type === 'job:claimed') lastIdOf.set(e.node, e.workerId);
    if (e.type === 'process:exited' && e.role === 'worker' && e.code === 0 && lastIdOf.has(e.node)) drained.add(lastIdOf.get(e.node)!);
  }
  const leftClaimed = history.filter((e) => e.type === 'lease:rescued' && e.owner && drained.has(e.owner)).map((e) => ({ jobId: (e as { jobId: number }).jobId, owner: (e as { owner?: string | null }).owner }));
  const bad = charged.length + late.length + neverRerun.length + leftClaimed.length;
  const viaUnreported = unreported ? ` (${fmt(unreported)} next claimed by a holder killed before it reported, judged by its rescue)` : '';
  const figure =
    `${fmt(released)} handed back${viaUnreported} by ${fmt(drained.size)} drained workers: ${fmt(charged.length)} charged, ${fmt(late.length)} not due until their lease ran out, ` +
    `${fmt(neverRerun.length)} never rerun; ${fmt(leftClaimed.length)} claims a drained worker left to the rescuer`;
  const examples = [...firstN(charged).map((c) => ({ charged: c })), ...firstN(late).map((l) => ({ late: l })), ...firstN(neverRerun).map((n) => ({ neverRerun: n })), ...firstN(leftClaimed).map((l) => ({ leftClaimed: l }))];
  const pass: boolean | 'unknown' = bad > 0 ? false : released === 0 ? 'unknown' : true;
  return { name: 'hand-back', pass, figure, bound: 'every hand-back uncharged and due at once; nothing left claimed', judged: { n: released, what: 'hand-backs' }, ...(examples.length ? { examples } : {}) };
}

export const handBack: CheckerDef<HandBackBounds> = {
  name: 'hand-back',
  says: 'a worker stopped gracefully hands back its unfinished jobs uncharged, they rerun at once, and it leaves nothing claimed',
  check: checkHandBack,
  bounds: {},
  defaults: {},
};
