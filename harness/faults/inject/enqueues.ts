import { enqueueMany } from '../../../engine/enqueue.ts';
import type { FaultAction } from '../plan.ts';
import { harnessQueries as q } from '../../runner/queries.ts';
import { evidence, injected, watchFor, type InjectionContext, type Injector } from './context.ts';

/** Enqueues `count` jobs of one kind in one statement, all due at the database's now(); waits for the first claim of one as evidence. */
async function enqueueFaultJobs(ctx: InjectionContext, action: FaultAction, kind: 'poison' | 'normal' | 'downstream'): Promise<void> {
  const runAt = (await ctx.db.query(q.DbNow)).rows[0].now as Date;
  const count = action.params.count as number;
  const queue = (action.params.queue as string | undefined) ?? ctx.defaultQueue;
  const jobs = await enqueueMany(
    ctx.db,
    Array.from({ length: count }, (_, i) => ({
      queue,
      payload: { kind, params: { durationMs: 5 } },
      options: { idempotencyKey: `fault:${action.seq}:${i}`, runAt, maxAttempts: (action.params.maxAttempts as number | undefined) ?? ctx.maxAttempts },
    })),
  );
  const ids = new Set(jobs.map((j) => j.id));
  const injectedT = ctx.recorder.now();
  injected(ctx, action, { queue, count: jobs.length, runAt: runAt.toISOString(), jobIds: [...ids].slice(0, 20) });
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
