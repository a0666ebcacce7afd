import { harnessQueries as q } from '../../runner/queries.ts';
import { evidence, holdUntil, injected, watchFor, type Injector } from './context.ts';

/** The handlers' shared dependency fails every call (or errorRate of them) for forS seconds. */
export const dependencyOutage: Injector = async (action, ctx) => {
  const startedT = ctx.recorder.now();
  const errorRate = (action.params.errorRate as number | undefined) ?? 1;
  await ctx.db.query(q.SetDependencyOutage, [true, errorRate]);
  injected(ctx, action, { phase: 'start', forS: action.params.forS, errorRate });
  const failed = watchFor(ctx, (e) => e.type === 'job:failed' && e.error.includes('dependency unavailable'), ((action.params.forS as number) + 1) * 1000);
  await holdUntil(ctx, action, startedT);
  await ctx.db.query(q.SetDependencyOutage, [false, 1]);
  injected(ctx, action, { phase: 'end' });
  const first = await failed;
  if (first) evidence(ctx, action, { firstFailureAtT: first.t });
};
