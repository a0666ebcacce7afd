import type { HistoryEvent } from '../../history.ts';
import { evidence, injected, watchFor, type Injector } from './context.ts';

/** How long a relay-kill waits for a relay to have a request open at the sink. */
const OPEN_REQUEST_WAIT_MS = 5_000;
/** How long a restarted worker's hand-back may take to show: its grace (2 s) and the release. */
const HAND_BACK_WAIT_MS = 10_000;

/**
 * SIGTERM a worker: a graceful restart (a deploy). It stops claiming, gives
 * its jobs the grace, hands back what is still running, uncharged, and
 * exits; the supervisor starts it again. It bit when the worker handed a
 * job back (`lease:released` from that node).
 */
export const workerRestart: Injector = async (action, ctx) => {
  for (const target of action.targets) {
    const node = `worker-${target.index}`;
    const proc = ctx.fleet.worker(target.index);
    if (!proc) {
      injected(ctx, action, { target: node, skipped: 'no live process in that slot' });
      continue;
    }
    const inFlight = ctx.fleet.inFlight.get(target.index)?.size ?? 0;
    const sentT = ctx.recorder.now();
    proc.kill('SIGTERM');
    injected(ctx, action, { target: node, pid: proc.pid, inFlight });
    const released = await watchFor(ctx, (e: HistoryEvent) => e.type === 'lease:released' && e.node === node && e.t >= sentT, HAND_BACK_WAIT_MS);
    if (released?.type === 'lease:released') evidence(ctx, action, { target: node, handedBack: released.jobId, afterMs: released.t - sentT });
  }
};

/**
 * SIGKILL the relay with the most deliveries open at the sink (mid-delivery:
 * it sent the request and will never mark the row). Waits up to 5 s for one;
 * it bit when a request was open as it died.
 */
export const relayKill: Injector = async (action, ctx) => {
  const until = ctx.clock.now() + OPEN_REQUEST_WAIT_MS;
  const busiest = () => {
    let best: { index: number; open: number } | undefined;
    for (const [relayId, open] of ctx.sink?.open ?? []) {
      const m = /^relay-(\d+)\./.exec(relayId);
      if (m && open > 0 && ctx.components.relay(Number(m[1])) && (!best || open > best.open)) best = { index: Number(m[1]), open };
    }
    return best;
  };
  let pick = busiest();
  while (!pick && ctx.clock.now() < until && !ctx.signal.aborted) {
    await ctx.clock.sleep(20, ctx.signal).catch(() => {});
    pick = busiest();
  }
  const index = pick?.index ?? 0;
  const proc = ctx.components.relay(index);
  if (!proc) {
    injected(ctx, action, { target: `relay-${index}`, skipped: 'no live relay' });
    return;
  }
  proc.kill('SIGKILL');
  injected(ctx, action, { target: `relay-${index}`, pid: proc.pid, openAtSink: pick?.open ?? 0 });
  if (pick) evidence(ctx, action, { target: `relay-${index}`, openAtSink: pick.open });
};
