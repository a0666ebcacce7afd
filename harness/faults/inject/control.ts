import { pauseQueue, resumeQueue } from '../../../engine/control/index.ts';
import { harnessQueries as q } from '../../runner/queries.ts';
import { evidence, holdUntil, injected, type Injector } from './context.ts';

const nemesis = { by: 'nemesis', reason: 'scenario fault: queue-pause' };

/**
 * An operator pauses a queue for forS seconds, then resumes it, through the
 * engine's own verbs. The history gets `queue:paused` / `queue:resumed` with
 * the database's times, which the paused-queue-idle checker judges claims by.
 * Evidence: jobs of the queue were due and waiting when it resumed (a pause
 * of an empty queue proves nothing).
 */
export const queuePause: Injector = async (action, ctx) => {
  const queue = (action.params.queue as string | undefined) ?? ctx.defaultQueue;
  const startedT = ctx.recorder.now();
  const { pausedAt } = await pauseQueue(ctx.db, queue, { ...nemesis, allowNew: true });
  ctx.recorder.record({ type: 'queue:paused', node: 'nemesis', queue, by: nemesis.by, dbTime: pausedAt.getTime() });
  injected(ctx, action, { phase: 'start', queue, forS: action.params.forS });
  await holdUntil(ctx, action, startedT);
  const waiting = (await ctx.db.query(q.DueInQueue, [queue])).rows[0].n as number;
  const { resumedAt } = await resumeQueue(ctx.db, queue, nemesis);
  ctx.recorder.record({ type: 'queue:resumed', node: 'nemesis', queue, by: nemesis.by, dbTime: resumedAt.getTime() });
  injected(ctx, action, { phase: 'end', queue });
  if (waiting > 0) evidence(ctx, action, { queue, dueWhenResumed: waiting });
};
