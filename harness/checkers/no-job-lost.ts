import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { JobIndex, TERMINAL_STATES } from './jobs.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface NoJobLostBounds {
  /** Acknowledged jobs allowed to be missing or unfinished. Default 0: durability has no budget. */
  maxLost: number;
}

/**
 * Every acknowledged enqueue ends `done` or `dead`; modelled on Jepsen's
 * total-queue checker, with the same vocabulary:
 *
 * - lost: `enqueue:ok` whose row is absent from the final state (a fail), or
 *   present but not finished (unknown: the run did not drain, so it cannot tell);
 * - recovered: `enqueue:info` (outcome unknown), or an invoke with no outcome
 *   recorded, whose row exists, found by the generator's `op:<n>` idempotency
 *   key; it must then be finished like any other;
 * - unexpected: a row under the key of an op that was never invoked, or that
 *   the database refused outright (`enqueue:fail`);
 * - collapsed: an acknowledged op answered with the job of another op. Two
 *   distinct enqueues (distinct keys) are two jobs; one that came back as
 *   somebody else's job was acknowledged and will never run, so it is missing.
 */
export function checkNoJobLost(history: readonly HistoryEvent[], final: FinalState, bounds: NoJobLostBounds): InvariantResult {
  const idx = new JobIndex(history, final);
  const missing: number[] = [];
  const unfinished: { op: number; jobId: number; state: string }[] = [];
  const unexpected: { op: number; jobId: number; why: string }[] = [];
  let acknowledged = 0;
  let recovered = 0;
  let unknownAbsent = 0;
  const opByAckedJob = new Map<number, number>();

  for (const r of idx.ops.values()) {
    if (r.ok) {
      acknowledged++;
      const first = opByAckedJob.get(r.ok.jobId);
      if (first === undefined) opByAckedJob.set(r.ok.jobId, r.op);
      if (first !== undefined && first !== r.op) missing.push(r.op); // collapsed onto op `first`'s job
      else if (!r.job) missing.push(r.op);
      else if (!TERMINAL_STATES.has(r.job.state)) unfinished.push({ op: r.op, jobId: r.job.id, state: r.job.state });
    } else if (r.info || (r.invoke && !r.fail)) {
      // No outcome recorded at all (the run was interrupted mid-call) is an unknown outcome too, as in Jepsen.
      if (!r.job) unknownAbsent++;
      else {
        recovered++;
        if (!TERMINAL_STATES.has(r.job.state)) unfinished.push({ op: r.op, jobId: r.job.id, state: r.job.state });
      }
    } else if (r.job && r.fail) {
      unexpected.push({ op: r.op, jobId: r.job.id, why: 'enqueue:fail, yet the row exists' });
    } else if (r.job && !r.invoke) {
      unexpected.push({ op: r.op, jobId: r.job.id, why: 'no enqueue:invoke for this op' });
    }
  }
  // Rows keyed op:<n> for ops the history never mentions at all.
  for (const [key, job] of idx.finalByKey) {
    const m = /^op:(\d+)$/.exec(key);
    if (m && !idx.ops.has(Number(m[1]))) unexpected.push({ op: Number(m[1]), jobId: job.id, why: 'no enqueue:invoke for this op' });
  }

  const lost = missing.length + unfinished.length;
  const figure =
    `${fmt(missing.length)} missing and ${fmt(unfinished.length)} unfinished of ${fmt(acknowledged)} acknowledged; ` +
    `${fmt(recovered)} of ${fmt(recovered + unknownAbsent)} unknown-outcome enqueues recovered; ${fmt(unexpected.length)} unexpected`;
  const examples = [
    ...firstN(missing).map((op) => ({ lost: 'missing', op })),
    ...firstN(unfinished).map((u) => ({ lost: 'unfinished', ...u })),
    ...firstN(unexpected).map((u) => ({ unexpected: u.why, op: u.op, jobId: u.jobId })),
  ];
  let pass: boolean | 'unknown';
  if (missing.length > bounds.maxLost || unexpected.length > 0) pass = false;
  else if (lost > bounds.maxLost) pass = 'unknown'; // present but not finished: not drained, cannot tell
  else if (acknowledged === 0 && recovered === 0) pass = 'unknown'; // nothing was enqueued: nothing was checked
  else pass = true;
  // Each acknowledged enqueue, and each unknown-outcome one whose row turned up, could have been lost.
  const judged = { n: acknowledged + recovered, what: 'acknowledged or recovered enqueues' };
  return { name: 'no-job-lost', pass, figure, bound: `${fmt(bounds.maxLost)} lost, 0 unexpected`, judged, ...(examples.length ? { examples } : {}) };
}

export const noJobLost: CheckerDef<NoJobLostBounds> = {
  name: 'no-job-lost',
  says: 'every acknowledged enqueue ends done or dead; an unknown-outcome enqueue, if it exists, ends done or dead',
  check: checkNoJobLost,
  bounds: { maxLost: 'number' },
  defaults: { maxLost: 0 },
};
