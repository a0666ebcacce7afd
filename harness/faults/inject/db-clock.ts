import type { HistoryEvent } from '../../history.ts';
import { msToDbMinute, stepDbClock } from '../../db-clock/db-clock.ts';
import { evidence, injected, watchFor, type Injector } from './context.ts';

/**
 * Steps the database's clock forward by jumpMs through the simulated database
 * clock (docs/time.md), and the clocks of the target nodes with it (scheduler
 * nodes that take their time from the same host or NTP source). Records the
 * database time before and after and the claimable jobs whose run_at the step
 * skipped over, by origin, as the database counted them in the same
 * transaction. Evidence: a claim of one of those jobs.
 *
 * With `minuteAtS` instead of `jumpMs`, the step is whatever (under a minute)
 * makes a minute of the database clock begin at that second of the run, so a
 * cron minute comes due at a moment the scenario chose (inside a failover's
 * lag window). The run's second is counted from this fault's own start, as
 * every fault's timing is.
 */
export const dbClockJump: Injector = async (action, ctx) => {
  // Stamped when the step began: workers see the new time from its commit on, which on a busy machine came a few
  // hundred ms before this call returned. `committedByT` bounds it from the other side.
  const beganT = ctx.recorder.now();
  const minuteAtMs = typeof action.params.minuteAtS === 'number' ? action.params.minuteAtS * 1000 : undefined;
  const jumpMs = minuteAtMs === undefined ? (action.params.jumpMs as number) : await msToDbMinute(ctx.db, minuteAtMs - action.atMs - (ctx.recorder.now() - beganT));
  const step = await stepDbClock(ctx.db, jumpMs);
  const committedByT = ctx.recorder.now();
  const nodes: string[] = [];
  for (const t of action.targets) {
    const proc = t.role === 'scheduler' ? ctx.fleet.schedulers[t.index] : ctx.fleet.worker(t.index);
    if (!proc?.send({ kind: 'clock:jump', deltaMs: jumpMs })) continue;
    if (t.role === 'scheduler') ctx.fleet.schedulerSkewMs[t.index] += jumpMs;
    nodes.push(`${t.role}-${t.index}`);
  }
  const fromMs = step.dbBefore.getTime();
  const toMs = step.dbAfter.getTime();
  // The minute placed, on the database clock and as run time (a harness t).
  const minuteAtDbMs = minuteAtMs === undefined ? undefined : Math.round((fromMs + jumpMs + minuteAtMs - action.atMs) / 60_000) * 60_000;
  injected(ctx, action, {
    jumpMs,
    dbBeforeMs: fromMs,
    dbAfterMs: toMs,
    dueAtOnce: { delayed: step.delayed, retry: step.retry, cron: step.cron },
    nodesStepped: nodes,
    committedByT,
    ...(minuteAtDbMs === undefined ? {} : { minuteAtDbMs, minuteAtT: beganT + minuteAtMs! - action.atMs }),
  }, beganT);
  // Evidence: a job the step made due at once was claimed; for a placed minute, a job due at that minute was.
  const madeDue = (e: HistoryEvent) =>
    e.type === 'job:claimed' && (minuteAtDbMs === undefined ? e.runAt > fromMs && e.runAt <= toMs : e.runAt === minuteAtDbMs);
  const first = await watchFor(ctx, madeDue, 60_000);
  if (first?.type === 'job:claimed') {
    evidence(ctx, action, { [minuteAtDbMs === undefined ? 'firstClaimOfASkippedJob' : 'firstClaimDueAtTheMinute']: first.jobId, runAt: new Date(first.runAt).toISOString() });
  }
};
