import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

/**
 * Idempotent enqueue (engine/enqueue.sql EnqueueOne): a producer that re-sends
 * an enqueue whose answer it lost, with the same idempotency key, gets the
 * job the first send created, and the database holds exactly one job for
 * the key, within the key's idempotency window: until its job is archived
 * (ARCHIVE_DEFAULTS.archiveAfterMs; after that the same key is a new job, as
 * documented). Per `enqueue:retried`: both answers name the same job, and the
 * final state (hot and archived rows) has exactly one job whose payload
 * carries that producer key (the payload, not the key column, so a key the
 * engine dropped or changed cannot hide a second job). A re-send made after
 * the first job was archived is outside the window and only counted.
 * Inconclusive with no re-send inside the window.
 */
export function checkIdempotentEnqueue(history: readonly HistoryEvent[], final: FinalState): InvariantResult {
  const jobsByKey = new Map<string, number>();
  for (const j of final.jobs) if (j.producerKey) jobsByKey.set(j.producerKey, (jobsByKey.get(j.producerKey) ?? 0) + 1);
  const archivedAt = new Map(final.jobs.filter((j) => j.archived && j.archivedAtMs !== undefined).map((j) => [j.id, j.archivedAtMs!]));
  const split: unknown[] = [];
  const wrongCount: unknown[] = [];
  let retried = 0;
  let afterWindow = 0;
  for (const e of history) {
    if (e.type !== 'enqueue:retried') continue;
    const archived = archivedAt.get(e.firstJobId);
    if (archived !== undefined && e.resentDbMs !== undefined && archived <= e.resentDbMs) {
      afterWindow++;
      continue;
    }
    retried++;
    if (e.firstJobId !== e.retryJobId) split.push({ key: e.key, firstJobId: e.firstJobId, retryJobId: e.retryJobId });
    const n = jobsByKey.get(e.key) ?? 0;
    if (n !== 1) wrongCount.push({ key: e.key, jobs: n });
  }
  const outside = afterWindow ? `; ${fmt(afterWindow)} re-sent after their job was archived (outside the window)` : '';
  const figure = `${fmt(split.length)} re-sends answered with a second job, ${fmt(wrongCount.length)} keys without exactly one job, of ${fmt(retried)} re-sent enqueues${outside}`;
  const examples = [...firstN(split).map((s) => ({ secondJob: s })), ...firstN(wrongCount).map((w) => ({ jobsForKey: w }))];
  const pass: boolean | 'unknown' = split.length + wrongCount.length > 0 ? false : retried === 0 ? 'unknown' : true;
  const judged = { n: retried, what: 're-sent enqueues inside the idempotency window' };
  return { name: 'idempotent-enqueue', pass, figure, bound: 'one job per key, whatever the producer re-sent', judged, ...(examples.length ? { examples } : {}) };
}

export const idempotentEnqueue: CheckerDef<Record<string, never>> = {
  name: 'idempotent-enqueue',
  says: 'an enqueue re-sent with the same idempotency key after a lost answer returns the same job; one job per key while its job is not archived',
  check: checkIdempotentEnqueue,
  bounds: {},
  defaults: {},
};
