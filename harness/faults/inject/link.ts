import { enqueue, enqueueQueries } from '../../../engine/enqueue.ts';
import { harnessQueries as q } from '../../runner/queries.ts';
import type { FaultAction } from '../plan.ts';
import { DIRECTIONS, type CommitCut, type CommitPoint, type Direction, type LinkProxy, type Shape } from '../proxy.ts';
import { evidence, holdUntil, injected, type InjectionContext, type Injector } from './context.ts';

/** How long an armed commit cut waits for a transaction of its point to commit before it gives up (no evidence: inconclusive). */
const CUT_WAIT_MS = 30_000;
/** How long a partition that starts on a claim waits for one before it starts all the same (and says so). */
const CLAIM_WAIT_MS = 5_000;

function directions(action: FaultAction): Direction[] {
  const d = action.params.direction as 'both' | Direction | undefined;
  return !d || d === 'both' ? [...DIRECTIONS] : [d];
}

/** The targeted workers' proxies, each with its node name and the jobs it had in flight as the fault began. */
function targetLinks(action: FaultAction, ctx: InjectionContext): { node: string; proxy: LinkProxy; jobIds: number[] }[] {
  if (!ctx.links) throw new Error(`${action.fault}: the run has no link proxies (the scenario declares no link fault)`);
  return action.targets.map((t) => ({
    node: `worker-${t.index}`,
    proxy: ctx.links!.proxy(`worker-${t.index}`),
    jobIds: [...(ctx.fleet.inFlight.get(t.index) ?? [])],
  }));
}

/**
 * A lasting shape of the targeted links (a partition, latency, a bandwidth
 * cap) for forS seconds, then healed. It bit when the proxy queued bytes
 * under it: held by a partition, delayed or paced by the rest.
 */
function shapeFault(change: Partial<Shape>, clear: Partial<Shape>): Injector {
  return async (action, ctx) => {
    const dirs = directions(action);
    const links = targetLinks(action, ctx);
    const before = links.map((l) => l.proxy.stats.shapedBytes);
    const startsOn = await startingStatement(action, ctx, links, () => links.forEach((l) => l.proxy.setShape(dirs, change)));
    const startedT = ctx.recorder.now();
    for (const l of links) {
      if (!startsOn) l.proxy.setShape(dirs, change);
      injected(ctx, action, {
        target: l.node, direction: dirs.length === 2 ? 'both' : dirs[0], forS: action.params.forS, ...change, ...startsOn,
        inFlight: l.jobIds.length, jobIds: l.jobIds.slice(0, 50), openConnections: l.proxy.open,
      });
    }
    try {
      await holdUntil(ctx, action, startedT);
    } finally {
      for (const l of links) {
        const queued = l.proxy.queued();
        l.proxy.setShape(dirs, clear);
        const shaped = l.proxy.stats.shapedBytes - before[links.indexOf(l)];
        injected(ctx, action, { target: l.node, phase: 'end' });
        if (shaped > 0) evidence(ctx, action, { target: l.node, bytesShaped: shaped, heldAtHeal: queued, openConnections: l.proxy.open, inFlightAtStart: l.jobIds.length });
      }
    }
  };
}

/**
 * A partition with `startsOn: 'claim'` begins at the first claim a target sends from its time on: `start` runs as the
 * proxy sees the claim's Bind, before forwarding it, so the claim itself is held. Answers how it began, or undefined
 * for a fault that starts at its time.
 */
async function startingStatement(
  action: FaultAction,
  ctx: InjectionContext,
  links: { proxy: LinkProxy }[],
  start: () => void,
): Promise<{ startedOn: string; waitedMs: number } | undefined> {
  if (action.params.startsOn !== 'claim') return undefined;
  const armedT = ctx.recorder.now();
  let disarms: (() => void)[] = [];
  const claimed = new Promise<boolean>((resolve) => {
    const once = () => {
      disarms.forEach((d) => d());
      start();
      resolve(true);
    };
    disarms = links.map((l) => l.proxy.armOnStatement('claim', once));
  });
  const timeout = ctx.clock.sleep(CLAIM_WAIT_MS, ctx.signal).then(
    () => false,
    () => false,
  );
  const onClaim = await Promise.race([claimed, timeout]);
  if (!onClaim) {
    disarms.forEach((d) => d());
    start();
  }
  return { startedOn: onClaim ? 'claim' : `no claim within ${CLAIM_WAIT_MS / 1000} s`, waitedMs: Math.round(ctx.recorder.now() - armedT) };
}

export const partition: Injector = shapeFault({ held: true }, { held: false });

export const latency: Injector = (action, ctx) =>
  shapeFault({ latencyMs: action.params.latencyMs as number, jitterMs: (action.params.jitterMs as number | undefined) ?? 0 }, { latencyMs: 0, jitterMs: 0 })(action, ctx);

export const bandwidth: Injector = (action, ctx) => shapeFault({ bytesPerS: action.params.bytesPerS as number }, { bytesPerS: 0 })(action, ctx);

/** Every open connection of the targeted links destroyed with an RST. It bit when one was open. */
export const reset: Injector = async (action, ctx) => {
  for (const l of targetLinks(action, ctx)) {
    const n = l.proxy.reset();
    injected(ctx, action, { target: l.node, connectionsReset: n, inFlight: l.jobIds.length });
    if (n > 0) evidence(ctx, action, { target: l.node, connectionsReset: n, inFlight: l.jobIds.length });
  }
};

/** The jobs a cut transaction was about, from what the proxy read of it. */
function cutJobIds(c: CommitCut): number[] {
  if (c.point === 'claim') return c.rowIds.map(Number);
  if (c.point === 'complete') return String(c.params[0] ?? '').split(',').filter(Boolean).map(Number);
  if (c.point === 'effect') return [Number(c.params[1])].filter(Number.isFinite);
  return c.rowIds.map(Number);
}

/**
 * The answer to a committed transaction lost (see LinkProxy.armCommitCut).
 * At a worker's point every target is armed and the first transaction to
 * commit there is cut; the others are disarmed. At `enqueue` the nemesis
 * is the producer: it enqueues through its own proxy, loses the answer,
 * finds the row the commit wrote, and re-sends with the same key
 * (`enqueue:retried`, which idempotent-enqueue and unknown-outcome-resolved judge).
 */
export const resetAfterCommit: Injector = async (action, ctx) => {
  const point = action.params.point as CommitPoint;
  if (point === 'enqueue') return cutEnqueue(action, ctx);
  const links = targetLinks(action, ctx);
  const arms = links.map((l) => ({ l, arm: l.proxy.armCommitCut(point) }));
  injected(ctx, action, { point, targets: links.map((l) => l.node), armed: true });
  const timeout = ctx.clock.sleep(CUT_WAIT_MS, ctx.signal).then(
    () => null,
    () => null,
  );
  const first = await Promise.race([...arms.map(({ l, arm }) => arm.cut.then((c) => (c ? { l, c } : null))), timeout]);
  for (const { arm } of arms) arm.disarm();
  if (!first) {
    injected(ctx, action, { point, closed: `no transaction committed at ${point} within ${CUT_WAIT_MS / 1000} s` });
    return;
  }
  const { l, c } = first;
  const key = c.point === 'effect' ? { key: c.params[0] } : {};
  evidence(ctx, action, { target: l.node, point, statement: c.statement, tags: c.tags, jobIds: cutJobIds(c), ...key, bytesDropped: c.bytesDropped });
};

async function cutEnqueue(action: FaultAction, ctx: InjectionContext): Promise<void> {
  if (!ctx.links) throw new Error('reset-after-commit: the run has no link proxies');
  const producer = ctx.links.producer();
  const key = `cut:${action.seq}`;
  const send = () => enqueue(producer, ctx.defaultQueue, { kind: 'normal', producerKey: key, params: { durationMs: 5 } }, { idempotencyKey: key, maxAttempts: ctx.maxAttempts });
  const arm = ctx.links.proxy('producer').armCommitCut('enqueue');
  injected(ctx, action, { point: 'enqueue', key });
  const lost = await send().then(
    () => undefined,
    (err: Error) => err.message,
  );
  arm.disarm();
  const c = await arm.cut;
  if (!c || lost === undefined) {
    injected(ctx, action, { point: 'enqueue', closed: 'the enqueue was answered; nothing cut' });
    return;
  }
  // What the cut commit wrote, read on the nemesis's own connection before the producer tries again.
  const first = (await ctx.db.query(enqueueQueries.FindByIdempotencyKey, [key])).rows[0]?.id as number | undefined;
  const resentAt = (await ctx.db.query(q.DbNow)).rows[0].now as Date;
  const again = await send();
  if (first !== undefined) ctx.recorder.record({ type: 'enqueue:retried', node: 'nemesis', key, firstJobId: first, retryJobId: again.id, resentDbMs: resentAt.getTime() });
  evidence(ctx, action, { target: 'producer', point: 'enqueue', statement: c.statement, tags: c.tags, key, error: lost, committedJobId: first ?? null, resentAnswer: again.id });
}
