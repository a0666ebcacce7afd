import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { Fleetline, jobLives, namesProcess, type Hold, type JobLife } from './lives.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

/** No bounds: a job finished by nobody is one too many. */
export type NoPhantomFinishBounds = Record<string, never>;

/** The hold held the lease when it reported its completion: nobody took the job over first, and it had not lost the lease. */
function heldAtCompletion(life: JobLife, h: Hold): boolean {
  const done = h.completed!;
  if (h.lost && h.lost.i < done.i) return false;
  if (h.rescued && h.rescued.i < done.i) return false;
  if (h.released && h.released.i < done.i) return false;
  if (h.deferred && h.deferred.i < done.i) return false;
  return !life.holds.some((o) => o !== h && o.i > h.i && o.i < done.i);
}

/**
 * Every job the database shows `done` was finished by an attempt a worker
 * really completed while it held the job's lease, in the words of Jepsen's
 * total-queue accounting:
 *
 * - confirmed: a `job:completed` from a holder that still held the lease (no
 *   later claim, rescue, hand-back or lost lease before it), or, when that
 *   report never came, a committed effect row written by the last holder
 *   (the completion commits in the effect's transaction);
 * - unconfirmed: no report, but the last holder's process was killed after
 *   its claim (a completion committed just before a SIGKILL is never
 *   reported), or its completion was retried after a dropped connection and
 *   refused because the first try had committed, or it was never seen
 *   claimed in a run where a worker was SIGKILLed (a killed process loses the
 *   reports still queued on its channel); counted, not failed, as Jepsen
 *   counts an indeterminate op;
 * - phantom (fails): done with no completion at all, or completed only by a
 *   worker that no longer held the lease, or by an effect row of a worker
 *   that was not the last holder;
 * - unexpected (fails): an accepted completion of a job that is in the final
 *   state but not done.
 */
export function checkNoPhantomFinish(history: readonly HistoryEvent[], final: FinalState, _bounds: NoPhantomFinishBounds): InvariantResult {
  const lives = jobLives(history);
  const fleet = new Fleetline(history);
  const effectsBy = new Map<number, Set<string>>();
  for (const r of final.effectRows ?? []) (effectsBy.get(r.jobId) ?? effectsBy.set(r.jobId, new Set()).get(r.jobId)!).add(r.workerId);
  const phantom: unknown[] = [];
  const unexpected: unknown[] = [];
  let done = 0;
  let byReport = 0;
  let byEffect = 0;
  let unconfirmed = 0;
  const killed = history.some((e) => e.type === 'process:exited' && e.role === 'worker' && e.signal === 'SIGKILL');
  for (const job of final.jobs) {
    const life = lives.get(job.id);
    const completions = (life?.holds ?? []).filter((h) => h.completed);
    if (job.state !== 'done') {
      const accepted = completions.filter((h) => heldAtCompletion(life!, h));
      if (accepted.length) unexpected.push({ jobId: job.id, state: job.state, completedBy: accepted[0].claim.workerId, attempt: accepted[0].claim.attempt });
      continue;
    }
    done++;
    if (!life || life.holds.length === 0) {
      // A worker SIGKILLed with reports still queued on its IPC channel loses its last claims and
      // completions together; with such a kill in the run a done job seen by nobody is indeterminate.
      if (killed) unconfirmed++;
      else phantom.push({ jobId: job.id, why: 'done, never claimed' });
      continue;
    }
    if (completions.some((h) => heldAtCompletion(life, h))) {
      byReport++;
      continue;
    }
    if (completions.length) {
      const h = completions[0];
      phantom.push({ jobId: job.id, why: 'completed only by a worker that had lost the lease', completedBy: h.claim.workerId, attempt: h.claim.attempt });
      continue;
    }
    const last = life.holds[life.holds.length - 1];
    const writers = effectsBy.get(job.id);
    if (writers?.size) {
      if (writers.size === 1 && namesProcess([...writers][0], last.claim.workerId)) byEffect++;
      else phantom.push({ jobId: job.id, why: 'effect committed by a worker that was not the last holder', effectBy: [...writers], lastHolder: last.claim.workerId });
      continue;
    }
    const untouched = !last.rescued && !last.lost && !last.failed && !last.released && !last.deferred;
    // Its own completion committed but the reply was lost with the connection: the retry found the row done
    // and reported the lease lost. Nobody else held the job after it, so nobody else can have finished it.
    const ownRetryRefused = !last.rescued && last.lost?.e.phase === 'complete';
    if ((untouched && fleet.exitedBetween(last.claim.node, last.claim.t, Number.POSITIVE_INFINITY)) || ownRetryRefused) unconfirmed++;
    else phantom.push({ jobId: job.id, why: 'done with no completion by its holder', lastHolder: last.claim.workerId, attempt: last.claim.attempt });
  }
  const base = {
    name: 'no-phantom-finish',
    bound: '0 phantom, 0 unexpected',
    // An unconfirmed finish is counted, not judged (its holder died, or its reply was lost, before it could report).
    judged: { n: done - unconfirmed, what: 'done jobs (unconfirmed ones left out)' },
    figure:
      `${fmt(phantom.length)} phantom and ${fmt(unexpected.length)} unexpected of ${fmt(done)} done jobs; ` +
      `${fmt(byReport)} completed by their holder, ${fmt(byEffect)} by their holder's committed effect, ${fmt(unconfirmed)} unconfirmed (holder killed, or its reply lost, before reporting)`,
  };
  const examples = [...firstN(phantom).map((p) => ({ phantom: p })), ...firstN(unexpected).map((u) => ({ unexpected: u }))];
  if (examples.length) return { ...base, pass: false, examples };
  return { ...base, pass: done > 0 ? true : 'unknown' };
}

export const noPhantomFinish: CheckerDef<NoPhantomFinishBounds> = {
  name: 'no-phantom-finish',
  says: 'every done job was completed by the holder of its lease (a completion or a committed effect); no completion of a job left unfinished',
  check: checkNoPhantomFinish,
  bounds: {},
  defaults: {},
};
