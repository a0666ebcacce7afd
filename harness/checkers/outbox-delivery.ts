import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { intentKeyOf } from '../outbox-keys.ts';
import { JobIndex } from './jobs.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface OutboxDeliveryBounds {
  /** Job kinds whose committed effect records an outbox intent. Default ['outbox']. */
  kinds: string[];
}

/**
 * The outbox's promise (docs/effects.md): an intent recorded in a job's
 * effect transaction is delivered at least once, with its key, after the
 * transaction commits, and never if it rolled back. Judged at the harness's
 * sink, which keeps its own idempotency store:
 *
 * - lost: a committed effect (a row of harness.effects, written in the same
 *   transaction as the intent) whose intent the sink never took (no
 *   `applied` or `duplicate` receipt);
 * - unexpected: the sink received a key that no committed effect recorded (a
 *   rolled-back attempt's intent, or one delivered before, and without, its
 *   commit), or it applied a key's intent as written by another attempt than
 *   the one whose effect committed (the intent's payload names its writer, the
 *   effect row its worker: one transaction writes both, so they agree).
 *
 * Redeliveries (a refused or aborted request sent again, a duplicate the
 * sink absorbed by key) are counted, not faulted: at least once is the promise.
 */
export function checkOutboxDelivery(history: readonly HistoryEvent[], final: FinalState, bounds: OutboxDeliveryBounds): InvariantResult {
  const idx = new JobIndex(history, final);
  const kinds = new Set(bounds.kinds);
  /** Intent key -> the worker whose attempt committed its effect. */
  const committed = new Map<string, string>();
  for (const r of final.effectRows ?? []) {
    const kind = idx.kindOf(r.jobId);
    if (kind !== undefined && kinds.has(kind)) committed.set(intentKeyOf(r.key), r.workerId);
  }
  const otherWriter: { key: string; delivered: string; committed: string }[] = [];
  const taken = new Set<string>();
  const received = new Set<string>();
  let requests = 0;
  let absorbed = 0;
  let retried = 0;
  for (const e of history) {
    if (e.type !== 'outbox:received') continue;
    requests++;
    received.add(e.key);
    if (e.outcome === 'applied' || e.outcome === 'duplicate') taken.add(e.key);
    const writer = committed.get(e.key);
    if (e.outcome === 'applied' && e.writer && writer && e.writer !== writer) otherWriter.push({ key: e.key, delivered: e.writer, committed: writer });
    if (e.outcome === 'duplicate') absorbed++;
    if (e.outcome === 'refused' || e.outcome === 'aborted') retried++;
  }
  const lost = [...committed.keys()].filter((k) => !taken.has(k));
  const unexpected = [...received].filter((k) => !committed.has(k));
  // Rolled-back attempts of outbox jobs (killed inside the effect's transaction): what an intent written outside it would betray.
  const rolledBack = history.filter((e) => e.type === 'fault:evidence' && e.fault === 'worker-kill' && e.detail.point === 'in-effect').length;
  const figure =
    `${fmt(lost.length)} lost, ${fmt(unexpected.length)} unexpected and ${fmt(otherWriter.length)} from an attempt that did not commit, of ${fmt(committed.size)} committed intents; ` +
    `${fmt(requests)} requests, ${fmt(retried)} refused or cut off and sent again, ${fmt(absorbed)} duplicates absorbed by key; ${fmt(rolledBack)} effect transactions killed before commit`;
  const examples = [
    ...firstN(lost).map((key) => ({ lost: key })),
    ...firstN(unexpected).map((key) => ({ unexpected: key })),
    ...firstN(otherWriter).map((w) => ({ notTheCommittedAttempt: w })),
  ];
  // No request at all: no relay ran (or none reached the sink), so nothing about delivery was judged.
  let pass: boolean | 'unknown' = requests === 0 ? 'unknown' : lost.length + unexpected.length + otherWriter.length === 0;
  if (pass === true && committed.size === 0) pass = 'unknown'; // no intent committed: nothing to deliver
  // Each committed intent could have been lost, each key received could have had no commit behind it.
  const keys = requests === 0 ? 0 : new Set([...committed.keys(), ...received]).size;
  const judged = { n: keys, what: 'intent keys committed or received' };
  return { name: 'outbox-delivery', pass, figure, bound: '0 lost, 0 unexpected, 0 from an attempt that did not commit', judged, ...(examples.length ? { examples } : {}) };
}

export const outboxDelivery: CheckerDef<OutboxDeliveryBounds> = {
  name: 'outbox-delivery',
  says: "every intent of a committed effect reaches the sink at least once, by key; no intent of a rolled-back attempt is ever sent",
  check: checkOutboxDelivery,
  bounds: { kinds: 'string[]' },
  defaults: { kinds: ['outbox'] },
};
