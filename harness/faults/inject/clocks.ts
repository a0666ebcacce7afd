import type { FaultAction } from '../plan.ts';
import { evidence, injected, watchFor, type InjectionContext, type Injector } from './context.ts';

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
    (e) => e.node === node && e.t > sentT && (e.type === 'cron:materialized' || e.type === 'fault:evidence' || e.type === 'job:claimed'),
    15_000,
  );
  if (bit) evidence(ctx, action, { target: node, after: bit.type, ...(bit.type === 'cron:materialized' ? { occurrences: bit.occurrences, inserted: bit.inserted } : {}) });
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

/** Sets a node's clock to just before a real DST transition of a real zone, so it crosses it while running. */
export const dst: Injector = async (action, ctx) => {
  const d = action.dst!;
  await Promise.all(
    action.targets.map((t) => {
      const nodeNow = ctx.clock.now() + (t.role === 'scheduler' ? ctx.fleet.schedulerSkewMs[t.index] : 0);
      return stepClock(ctx, action, t.role, t.index, d.setClockToMs - nodeNow, {
        zone: action.params.zone,
        transition: action.params.transition,
        transitionAt: new Date(d.transitionAtMs).toISOString(),
      });
    }),
  );
};
