import { pauseSchedule, resumeSchedule } from '../../../engine/cron/schedule.ts';
import type { FaultAction } from '../plan.ts';
import type { OperatorPath } from '../spec.ts';
import { actorOf } from './control.ts';
import { evidence, holdUntil, injected, type InjectionContext, type Injector } from './context.ts';

/** Pauses or resumes one schedule through `via`; records `schedule:<verb>d` with when it was sent. Throws on a refusal. */
async function toggle(ctx: InjectionContext, action: FaultAction, scheduleId: string, verb: 'pause' | 'resume'): Promise<void> {
  // The spec refuses `cli` here (no audited command line verb pauses a schedule).
  const via = (action.params.via as Exclude<OperatorPath, 'cli'> | undefined) ?? 'api';
  const sentAt = ctx.recorder.now();
  if (via === 'dashboard') {
    if (!ctx.dashboard) throw new Error(`${action.fault}: via dashboard, but the run serves no dashboard`);
    const res = await ctx.dashboard.act(`${verb}-schedule`, { id: scheduleId }, actorOf(action, via, verb === 'pause' ? 0 : 1));
    if (!res.ok) throw new Error(`${action.fault}: the dashboard refused to ${verb} schedule ${scheduleId}: ${res.text}`);
  } else {
    await (verb === 'pause' ? pauseSchedule(ctx.db, scheduleId) : resumeSchedule(ctx.db, scheduleId));
  }
  ctx.recorder.record({ type: verb === 'pause' ? 'schedule:paused' : 'schedule:resumed', node: `operator-${via}`, scheduleId, via, sentAt });
}

/**
 * An operator pauses a schedule for forS seconds, then resumes it (the
 * schedule's row: enabled false, then true). The history gets
 * `schedule:paused` / `schedule:resumed`, beside the scheduler nodes'
 * `cron:materialized`, which schedule-paused-idle judges. Evidence: another
 * schedule had an occurrence written while this one was paused, so one of
 * this schedule's could have been too (a pause with nothing coming due
 * proves nothing).
 */
export const schedulePause: Injector = async (action, ctx) => {
  const scheduleId = action.params.schedule as string;
  const startedT = ctx.recorder.now();
  await toggle(ctx, action, scheduleId, 'pause');
  injected(ctx, action, { phase: 'start', schedule: scheduleId, forS: action.params.forS });
  await holdUntil(ctx, action, startedT);
  const endT = ctx.recorder.now();
  await toggle(ctx, action, scheduleId, 'resume');
  injected(ctx, action, { phase: 'end', schedule: scheduleId });
  const others = ctx.recorder.events.filter((e) => e.type === 'cron:materialized' && e.scheduleId !== scheduleId && e.inserted > 0 && e.t > startedT && e.t < endT);
  if (others.length) evidence(ctx, action, { schedule: scheduleId, othersMaterializedWhilePaused: others.length });
};
