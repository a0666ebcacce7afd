import type { FaultAction } from '../plan.ts';
import { harnessQueries as q } from '../../runner/queries.ts';
import { evidence, holdUntil, injected, watchFor, type InjectionContext, type Injector } from './context.ts';

/**
 * Steps a node's clock by `deltaMs` over IPC and waits for the node to show
 * it acted on the new time (a materialization or a refusal from a scheduler;
 * any event stamped with the new node time from a worker).
 */
async function stepClock(ctx: InjectionContext, action: FaultAction, role: 'worker' | 'scheduler', index: number, deltaMs: number, detail: Record<string, unknown>) {
  const node = `${role}-${index}`;
  const proc = role === 'worker' ? ctx.fleet.worker(index) : ctx.fleet.schedulers[index];
  if (!proc?.alive) {
    injected(ctx, action, { target: node, skipped: 'no live process', ...detail });
    return;
  }
  proc.send({ kind: 'clock:jump', deltaMs });
  if (role === 'scheduler') ctx.fleet.schedulerSkewMs[index] += deltaMs;
  injected(ctx, action, { target: node, deltaMs, ...detail });
  const sentT = ctx.recorder.now();
  const bit = await watchFor(
    ctx,
    (e) => e.node === node && e.t > sentT && (e.type === 'cron:materialized' || e.type === 'cron:refused' || e.type === 'job:claimed'),
    15_000,
  );
  if (bit) {
    evidence(ctx, action, {
      target: node,
      after: bit.type,
      ...(bit.type === 'cron:materialized' ? { occurrences: bit.occurrences, inserted: bit.inserted } : {}),
      ...(bit.type === 'cron:refused' ? { refused: bit.reason } : {}),
    });
  }
}

/** Sets a node's clock offset to skewMs (relative to the harness clock). */
export const clockSkew: Injector = async (action, ctx) => {
  const skewMs = action.params.skewMs as number;
  await Promise.all(
    action.targets.map((t) => {
      const current = t.role === 'scheduler' ? ctx.fleet.schedulerSkewMs[t.index] : 0;
      return stepClock(ctx, action, t.role, t.index, skewMs - current, { skewMs });
    }),
  );
};

/** Steps a node's clock by jumpMs, forward or back, as NTP or an operator's `date -s` would. */
export const clockJump: Injector = async (action, ctx) => {
  const jumpMs = action.params.jumpMs as number;
  await Promise.all(action.targets.map((t) => stepClock(ctx, action, t.role, t.index, jumpMs, { jumpMs })));
};

/**
 * Slows the targeted workers' clocks to `rate` for forS seconds, then sets
 * them true again (their readings stay behind, as a clock that lost time
 * does). It bit when the fence refused a renewal of one of them meanwhile:
 * a lease that ran out on the database clock before the slow clock's
 * heartbeat came, taken by someone else before the renewal landed.
 */
export const clockRate: Injector = async (action, ctx) => {
  const rate = action.params.rate as number;
  const startedT = ctx.recorder.now();
  const nodes = action.targets.filter((t) => ctx.fleet.worker(t.index)?.send({ kind: 'clock:rate', rate })).map((t) => `worker-${t.index}`);
  for (const t of action.targets) {
    const node = `worker-${t.index}`;
    injected(ctx, action, nodes.includes(node) ? { target: node, rate, forS: action.params.forS } : { target: node, skipped: 'no live process' });
  }
  try {
    await holdUntil(ctx, action, startedT);
  } finally {
    for (const t of action.targets) ctx.fleet.worker(t.index)?.send({ kind: 'clock:rate', rate: 1 });
  }
  for (const node of nodes) {
    const refused = ctx.recorder.events.filter((e) => e.type === 'lease:lost' && e.phase === 'heartbeat' && e.node === node && e.t >= startedT);
    injected(ctx, action, { target: node, phase: 'end' });
    if (refused.length > 0) evidence(ctx, action, { target: node, renewalsRefused: refused.length, jobIds: refused.slice(0, 20).map((e) => (e as { jobId: number }).jobId) });
  }
};

/**
 * Moves a scheduler node to just before a real DST transition of a real zone,
 * so it crosses it while running. The node's clock alone cannot go there: the
 * materializer decides "missed" by the database clock and refuses to run when
 * its own clock is far off it. So the node's whole world moves (its clock and
 * its reading of the database clock, `world: true` in bin/scheduler.ts), its
 * skew stays what it really is, and the schedules' progress is rewound to
 * `setClockTo - downS` (default: the catch-up window) so what the node catches up and what it
 * materializes live across the transition are both decided by the real
 * materializer under each schedule's policy. The rows it writes have past
 * run_at (the transition is in a past year) and run at once. Evidence: the
 * node materialized occurrences after the move.
 */
export const dst: Injector = async (action, ctx) => {
  const d = action.dst!;
  for (const t of action.targets) {
    const node = `${t.role}-${t.index}`;
    const detail = { zone: action.params.zone, transition: action.params.transition, transitionAt: new Date(d.transitionAtMs).toISOString() };
    const proc = t.role === 'scheduler' ? ctx.fleet.schedulers[t.index] : undefined;
    if (!proc?.alive) {
      injected(ctx, action, { target: node, skipped: t.role === 'scheduler' ? 'no live process' : 'dst moves scheduler nodes only', ...detail });
      continue;
    }
    const nodeNow = ctx.clock.now() + ctx.fleet.schedulerSkewMs[t.index];
    const deltaMs = d.setClockToMs - nodeNow;
    proc.send({ kind: 'clock:jump', deltaMs, world: true });
    ctx.fleet.schedulerSkewMs[t.index] += deltaMs;
    const settings = ctx.fleet.schedulerNode(t.index);
    const fromMs = d.setClockToMs - (d.downMs ?? settings.catchUpWindowMs ?? 0);
    // A tick that read the old time may still be writing progress: let a few ticks pass (the moved node's own
    // ticks are no-ops until the rewind, its horizon being behind the progress mark), then rewind.
    await ctx.clock.sleep(1_500, ctx.signal).catch(() => {});
    await ctx.db.query(q.RewindScheduleProgress, [new Date(fromMs)]);
    injected(ctx, action, { target: node, deltaMs, world: true, progressFrom: new Date(fromMs).toISOString(), ...detail });
    const sentT = ctx.recorder.now();
    const bit = await watchFor(ctx, (e) => e.node === node && e.t >= sentT && e.type === 'cron:materialized', 15_000);
    if (bit && bit.type === 'cron:materialized') evidence(ctx, action, { target: node, occurrences: bit.occurrences, inserted: bit.inserted });
  }
};

/**
 * Rewinds every schedule's progress mark to backS before the database's now,
 * so the nodes compute occurrences they (or another node) already wrote.
 * Evidence: a materialization after it that computed more occurrences than
 * it inserted, i.e. the unique key collapsed a double compute.
 */
export const cronRewind: Injector = async (action, ctx) => {
  const backMs = (action.params.backS as number) * 1000;
  const sentT = ctx.recorder.now();
  await ctx.db.query(q.RewindProgressBy, [backMs]);
  injected(ctx, action, { backMs });
  const bit = await watchFor(ctx, (e) => e.type === 'cron:materialized' && e.t > sentT && e.occurrences > e.inserted, 15_000);
  if (bit && bit.type === 'cron:materialized') evidence(ctx, action, { node: bit.node, occurrences: bit.occurrences, inserted: bit.inserted });
};
