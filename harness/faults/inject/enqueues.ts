import { enqueue, enqueueMany } from '../../../engine/enqueue.ts';
import type { FaultAction } from '../plan.ts';
import { harnessQueries as q } from '../../runner/queries.ts';
import { historyIdOf } from '../../engines/peer-common.ts';
import { evidence, injected, watchFor, type InjectionContext, type Injector } from './context.ts';

type FaultJobKind = 'poison' | 'normal' | 'downstream';

/**
 * The fault's `count` jobs, all due at `runAt`, in one statement: through
 * stampede's enqueueMany, or in a peer run through the peer's own batch
 * enqueue (its tables, its API), keyed `fault:<seq>:<i>` either way. Answers
 * the history's ids of the jobs.
 */
async function insertFaultJobs(ctx: InjectionContext, action: FaultAction, kind: FaultJobKind, queue: string, runAt: Date): Promise<number[]> {
  const count = action.params.count as number;
  const maxAttempts = (action.params.maxAttempts as number | undefined) ?? ctx.maxAttempts;
  const fairnessKey = action.params.fairnessKey as string | undefined;
  const keys = Array.from({ length: count }, (_, i) => `fault:${action.seq}:${i}`);
  const params = { durationMs: 5 };
  if (ctx.producer) {
    // A peer's worker finds the job's kind and its history id in the payload (harness/engines/peer-worker.ts);
    // priority 0, as stampede's enqueueMany gives these jobs by default.
    const jobs = keys.map((key) => ({ queue, payload: { kind, key, hid: historyIdOf(key), params }, key, priority: 0, maxAttempts, runAt }));
    return (await ctx.producer.enqueueBatch(jobs)).map((j) => j.jobId);
  }
  const jobs = await enqueueMany(
    ctx.db,
    keys.map((idempotencyKey) => ({ queue, payload: { kind, params }, options: { idempotencyKey, runAt, maxAttempts, ...(fairnessKey ? { fairnessKey } : {}) } })),
  );
  return jobs.map((j) => j.id);
}

/**
 * Enqueues `count` jobs of one kind in one statement, all due at the database's now() (or `dueAgoS` before it);
 * waits for the first claim of one as evidence.
 */
async function enqueueFaultJobs(ctx: InjectionContext, action: FaultAction, kind: FaultJobKind): Promise<void> {
  const now = (await ctx.db.query(q.DbNow)).rows[0].now as Date;
  const runAt = new Date(now.getTime() - Math.round(((action.params.dueAgoS as number | undefined) ?? 0) * 1000));
  const queue = (action.params.queue as string | undefined) ?? ctx.defaultQueue;
  const fairnessKey = action.params.fairnessKey as string | undefined;
  const ids = new Set(await insertFaultJobs(ctx, action, kind, queue, runAt));
  const injectedT = ctx.recorder.now();
  injected(ctx, action, { queue, count: ids.size, runAt: runAt.toISOString(), jobIds: [...ids].slice(0, 20), ...(fairnessKey ? { fairnessKey } : {}) });
  // Behind a backlog the first claim can take a while; wait as long as a run may last.
  // The first sign a worker took one: its claim, or, for a poison that killed the worker before the
  // claim event got out, the rescue of its expired lease or its death.
  const taken = await watchFor(
    ctx,
    (e) => (e.type === 'job:claimed' || e.type === 'lease:rescued' || e.type === 'job:dead') && ids.has(e.jobId),
    300_000,
  );
  if (taken && 'jobId' in taken) evidence(ctx, action, { first: taken.type, jobId: taken.jobId, afterMs: taken.t - injectedT });
}

/** Jobs whose payload kills the handler's process on every attempt. */
export const poisonPill: Injector = (action, ctx) => enqueueFaultJobs(ctx, action, 'poison');

/** Many jobs due at the same instant: one bulk insert with one run_at. */
export const thunderingHerd: Injector = (action, ctx) => enqueueFaultJobs(ctx, action, (action.params.kind as FaultJobKind | undefined) ?? 'normal');

/**
 * A producer that lost its acknowledgement re-sends with the same key: each
 * of `count` enqueues is sent, its answer dropped (as a reset connection
 * drops it after the COMMIT), and sent again. The engine's promise is one
 * job per key; both answers go into the history for idempotent-enqueue.
 */
export const enqueueRetry: Injector = async (action, ctx) => {
  const count = action.params.count as number;
  const queue = (action.params.queue as string | undefined) ?? ctx.defaultQueue;
  injected(ctx, action, { queue, count });
  let retried = 0;
  for (let i = 0; i < count && !ctx.signal.aborted; i++) {
    const key = `retry:${action.seq}:${i}`;
    const send = () => enqueue(ctx.db, queue, { kind: 'normal', producerKey: key, params: { durationMs: 5 } }, { idempotencyKey: key, maxAttempts: ctx.maxAttempts });
    try {
      const first = await send();
      const resentAt = (await ctx.db.query(q.DbNow)).rows[0].now as Date;
      const again = await send();
      ctx.recorder.record({ type: 'enqueue:retried', node: 'nemesis', key, firstJobId: first.id, retryJobId: again.id, resentDbMs: resentAt.getTime() });
      retried++;
    } catch (err) {
      ctx.log.warn('enqueue-retry: a send failed; that key proves nothing', { key, error: (err as Error).message });
    }
  }
  if (retried) evidence(ctx, action, { queue, retried });
};
