import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

/**
 * Every write whose answer a reset-after-commit cut (the server committed it,
 * the client never heard) is resolved without loss or duplicate, by what the
 * fault's evidence names:
 *
 * - `enqueue`: the producer's re-send with the same key answered the job the
 *   cut commit wrote, and the database holds exactly one job for the key;
 * - `claim`: each job the lost claim took ends done (or dead), and is charged
 *   no crash for the claim nobody heard of (the rescue of the lease the cut
 *   left, owned by the cut worker, before the job's next claim);
 * - `complete`: each job whose completion's answer was lost ends done, is not
 *   claimed again after the cut (not rerun) and is charged no crash;
 * - `effect`: the job ends done and its effect was applied exactly once.
 *
 * Unknown when no cut landed.
 */
export function checkUnknownOutcomeResolved(history: readonly HistoryEvent[], final: FinalState): InvariantResult {
  const jobs = new Map(final.jobs.map((j) => [j.id, j]));
  const wrong: unknown[] = [];
  const byPoint: Record<string, number> = {};
  let judged = 0;
  for (const [i, e] of history.entries()) {
    if (e.type !== 'fault:evidence' || e.fault !== 'reset-after-commit') continue;
    const point = String(e.detail.point);
    byPoint[point] = (byPoint[point] ?? 0) + 1;
    const later = history.slice(i + 1);
    if (point === 'enqueue') {
      judged++;
      const key = String(e.detail.key);
      const retried = history.find((r) => r.type === 'enqueue:retried' && r.key === key);
      const forKey = final.jobs.filter((j) => j.producerKey === key);
      if (retried?.type !== 'enqueue:retried' || retried.firstJobId !== retried.retryJobId || forKey.length !== 1) {
        wrong.push({ point, key, committedJobId: e.detail.committedJobId, resentAnswer: retried?.type === 'enqueue:retried' ? retried.retryJobId : null, jobsForKey: forKey.length });
      }
      continue;
    }
    for (const jobId of (e.detail.jobIds as number[] | undefined) ?? []) {
      judged++;
      const job = jobs.get(jobId);
      // Charged for the cut itself: the rescue of the lease the cut write left (its owner the cut worker's process,
      // before anyone claimed the job again), not a crash of a later holder in some other fault.
      const nextClaim = later.find((r) => r.type === 'job:claimed' && r.jobId === jobId);
      const cutOwner = `${String(e.detail.target)}.`;
      const crashed = later.some(
        (r) => r.type === 'lease:rescued' && r.jobId === jobId && r.crashed === true && (r.owner ?? '').startsWith(cutOwner) && (!nextClaim || r.t < nextClaim.t),
      );
      const rerun = later.some((r) => r.type === 'job:claimed' && r.jobId === jobId);
      const problems: string[] = [];
      if (job?.state !== 'done' && job?.state !== 'dead') problems.push(`ended ${job?.state ?? 'missing'}`);
      if (crashed) problems.push('charged a crash');
      if (point === 'complete' && rerun) problems.push('claimed again after its completion committed');
      if (point === 'effect') {
        const key = typeof e.detail.key === 'string' ? e.detail.key : undefined;
        const applied = key === undefined ? undefined : (final.effects[key] ?? 0);
        if (applied !== undefined && applied !== 1) problems.push(`effect applied ${applied} times`);
      }
      if (problems.length) wrong.push({ point, jobId, problems });
    }
  }
  const figure = `${fmt(wrong.length)} of ${fmt(judged)} lost answers resolved wrongly (${Object.entries(byPoint).map(([p, n]) => `${fmt(n)} ${p}`).join(', ') || 'no cut landed'})`;
  const base = { name: 'unknown-outcome-resolved', figure, bound: 'every cut write resolved: no loss, no second job for a key, no rerun of a completion, no crash charged, one effect', judged: { n: judged, what: 'writes whose answer was cut after the commit' } };
  if (wrong.length) return { ...base, pass: false, examples: firstN(wrong) };
  return { ...base, pass: judged > 0 ? true : 'unknown' };
}

export const unknownOutcomeResolved: CheckerDef<Record<string, never>> = {
  name: 'unknown-outcome-resolved',
  says: 'a write whose answer was lost after the commit (enqueue, claim, completion, effect) is resolved without loss, duplicate, rerun or crash charged',
  check: checkUnknownOutcomeResolved,
  bounds: {},
  defaults: {},
};
