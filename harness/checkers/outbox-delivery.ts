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
 * - unexpected: the sink received a key that no committed effect recorded: a
 *   rolled-back attempt's intent, or one delivered before (and without) its
 *   commit.
 *
 * Redeliveries (a refused or aborted request sent again, a duplicate the
 * sink absorbed by key) are counted, not faulted: at least once is the promise.
 */
export function checkOutboxDelivery(history: readonly HistoryEvent[], final: FinalState, bounds: OutboxDeliveryBounds): InvariantResult {
  const idx = new JobIndex(history, final);
  const kinds = new Set(bounds.kinds);
  const committed = new Set<string>();
  for (const r of final.effectRows ?? []) {
    const kind = idx.kindOf(r.jobId);
    if (kind !== undefined && kinds.has(kind)) committed.add(intentKeyOf(r.key));
  }
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
    if (e.outcome === 'duplicate') absorbed++;
    if (e.outcome === 'refused' || e.outcome === 'aborted') retried++;
  }
  const lost = [...committed].filter((k) => !taken.has(k));
  const unexpected = [...received].filter((k) => !committed.has(k));
  const figure =
    `${fmt(lost.length)} lost and ${fmt(unexpected.length)} unexpected of ${fmt(committed.size)} committed intents; ` +
    `${fmt(requests)} requests, ${fmt(retried)} refused or cut off and sent again, ${fmt(absorbed)} duplicates absorbed by key`;
  const examples = [...firstN(lost).map((key) => ({ lost: key })), ...firstN(unexpected).map((key) => ({ unexpected: key }))];
  // No request at all: no relay ran (or none reached the sink), so nothing about delivery was judged.
  let pass: boolean | 'unknown' = requests === 0 ? 'unknown' : lost.length === 0 && unexpected.length === 0;
  if (pass === true && committed.size === 0) pass = 'unknown'; // no intent committed: nothing to deliver
  return { name: 'outbox-delivery', pass, figure, bound: '0 lost, 0 unexpected', ...(examples.length ? { examples } : {}) };
}

export const outboxDelivery: CheckerDef<OutboxDeliveryBounds> = {
  name: 'outbox-delivery',
  says: "every intent of a committed effect reaches the sink at least once, by key; no intent of a rolled-back attempt is ever sent",
  check: checkOutboxDelivery,
  bounds: { kinds: 'string[]' },
  defaults: { kinds: ['outbox'] },
};
