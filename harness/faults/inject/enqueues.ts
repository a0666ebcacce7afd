import { enqueue, enqueueMany } from '../../../engine/enqueue.ts';
import type { FaultAction } from '../plan.ts';
import { harnessQueries as q } from '../../runner/queries.ts';
import { evidence, injected, watchFor, type InjectionContext, type Injector } from './context.ts';

/** Enqueues `count` jobs of one kind in one statement, all due at the database's now(); waits for the first claim of one as evidence. */
async function enqueueFaultJobs(ctx: InjectionContext, action: FaultAction, kind: 'poison' | 'normal' | 'downstream'): Promise<void> {
  const runAt = (await ctx.db.query(q.DbNow)).rows[0].now as Date;
  const count = action.params.count as number;
  const queue = (action.params.queue as string | undefined) ?? ctx.defaultQueue;
  const fairnessKey = action.params.fairnessKey as string | undefined;
  const jobs = await enqueueMany(
    ctx.db,
    Array.from({ length: count }, (_, i) => ({
      queue,
      payload: { kind, params: { durationMs: 5 } },
      options: {
        idempotencyKey: `fault:${action.seq}:${i}`,
        runAt,
        maxAttempts: (action.params.maxAttempts as number | undefined) ?? ctx.maxAttempts,
        ...(fairnessKey ? { fairnessKey } : {}),
      },
    })),
  );
  const ids = new Set(jobs.map((j) => j.id));
  const injectedT = ctx.recorder.now();
  injected(ctx, action, { queue, count: jobs.length, runAt: runAt.toISOString(), jobIds: [...ids].slice(0, 20), ...(fairnessKey ? { fairnessKey } : {}) });
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
export const thunderingHerd: Injector = (action, ctx) => enqueueFaultJobs(ctx, action, (action.params.kind as 'normal' | 'downstream' | undefined) ?? 'normal');

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
