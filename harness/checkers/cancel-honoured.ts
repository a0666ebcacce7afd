import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { operatorActions } from './operator-actions.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export type CancelHonouredBounds = Record<string, never>;

/**
 * An operator's cancel is final (docs/operating.md, "Cancelling a running
 * job"). For every cancel the engine accepted: the job ends `cancelled`, no
 * completion of it is ever accepted (a running one's handler is aborted at
 * its next heartbeat and its result refused by the lease fence), and no claim
 * of it begins after the cancel returned (database clock). A cancel of a job
 * that was done when it came must be refused (JobStateError). Running
 * cancels whose handler reported the abort (`job:cancelled`) are counted.
 * Unknown when no cancel was accepted.
 */
export function checkCancelHonoured(history: readonly HistoryEvent[], final: FinalState): InvariantResult {
  const jobs = new Map(final.jobs.map((j) => [j.id, j]));
  const cancels = operatorActions(history, ['cancel']);
  const completed = new Set<number>();
  const cancelledEvents = new Set<number>();
  for (const e of history) {
    if (e.type === 'job:completed') completed.add(e.jobId);
    if (e.type === 'job:cancelled') cancelledEvents.add(e.jobId);
  }
  const bad: Record<string, unknown>[] = [];
  let accepted = 0;
  let running = 0;
  let aborted = 0;
  let refusedDone = 0;
  for (const { a } of cancels) {
    for (const id of a.jobIds) {
      const was = a.before[id];
      if (a.outcome === 'refused') {
        if (was === 'done') refusedDone++;
        continue;
      }
      accepted++;
      if (was === 'done') bad.push({ jobId: id, acceptedCancelOfDoneJob: true });
      if (was === 'claimed') {
        running++;
        if (cancelledEvents.has(id)) aborted++;
      }
      const job = jobs.get(id);
      if (job?.state !== 'cancelled') bad.push({ jobId: id, cancelled: a.via, wasBefore: was, endedAs: job ? (job.archived ? `archived ${job.state}` : job.state) : 'missing' });
      if (completed.has(id) && was !== 'done') bad.push({ jobId: id, completionAccepted: true });
      // After the verb returned (dbTime), so after its commit: a claim that committed before the cancel locked the row is legitimate.
      const late = history.find((e) => e.type === 'job:claimed' && e.jobId === id && e.dbTime !== undefined && e.dbTime > a.dbTime!);
      if (late) bad.push({ jobId: id, claimedAfterCancelMs: late.dbTime! - a.dbTime! });
    }
  }
  const n = cancels.reduce((s, c) => s + c.a.jobIds.length, 0);
  return {
    name: 'cancel-honoured',
    pass: bad.length > 0 ? false : accepted === 0 ? 'unknown' : true,
    figure:
      `${fmt(accepted)} cancels accepted (${fmt(running)} of running jobs, ${fmt(aborted)} handlers told at a heartbeat), ${fmt(refusedDone)} cancels of done jobs refused; ` +
      `${fmt(bad.length)} broken (not cancelled at the end, completed, claimed after the cancel, or a done job cancelled)`,
    bound: 'every accepted cancel ends cancelled, never completes or starts again; a done job is refused',
    judged: { n, what: 'cancels issued' },
    ...(bad.length ? { examples: firstN(bad) } : {}),
  };
}

export const cancelHonoured: CheckerDef<CancelHonouredBounds> = {
  name: 'cancel-honoured',
  says: 'a cancelled job never completes or starts after its cancel; a running one is aborted; a done one is refused',
  check: checkCancelHonoured,
  bounds: {},
  defaults: {},
};
