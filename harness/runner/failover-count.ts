import type { Logger } from '../../engine/log.ts';
import type { Replica } from '../postgres/replica.ts';
import type { HistoryRecorder } from './recorder.ts';

/**
 * The independent count the failover checkers are held to: after the drain,
 * every enqueue the run acknowledged (its job id and its op, from the
 * history) is looked up by SQL on the promoted primary, and the number with
 * no such row is recorded as the failover's evidence (`sqlMissingEnqueues`).
 * Nothing when the failover did not promote the standby.
 */
export async function countMissingAcknowledged(replica: Replica, dbName: string, recorder: HistoryRecorder, log: Logger): Promise<void> {
  const promoted = recorder.events.find((e) => e.type === 'fault:injected' && e.fault === 'failover' && e.detail.promoted === true);
  if (!promoted || promoted.type !== 'fault:injected') return;
  const acked = recorder.events.flatMap((e) => (e.type === 'enqueue:ok' ? [{ jobId: e.jobId, op: e.op }] : []));
  try {
    const missing = await replica.missingAcknowledgedEnqueues(dbName, acked);
    recorder.record({ type: 'fault:evidence', node: 'harness', fault: 'failover', detail: { seq: promoted.detail.seq, sqlMissingEnqueues: missing, of: acked.length } });
  } catch (err) {
    log.warn('the independent count of missing acknowledged enqueues failed', { error: (err as Error).message });
  }
}
