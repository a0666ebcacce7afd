import { evidence, holdUntil, injected, watchFor, type Injector } from './context.ts';

/**
 * SIGKILL a worker. At `any` point the kill lands whenever it lands, and it
 * bit if the worker had jobs in flight; at `mid-handler` or `after-effect`
 * the worker is armed over IPC and kills itself at exactly that point of its
 * next job (the handler module reports it, which is the evidence).
 */
export const workerKill: Injector = async (action, ctx) => {
  const point = (action.params.point as string | undefined) ?? 'any';
  for (const target of action.targets) {
    const proc = ctx.fleet.worker(target.index);
    if (!proc) {
      injected(ctx, action, { target: `worker-${target.index}`, point, skipped: 'no live process in that slot' });
      continue;
    }
    if (point === 'any') {
      const inFlight = [...(ctx.fleet.inFlight.get(target.index) ?? [])];
      proc.kill('SIGKILL');
      injected(ctx, action, { target: `worker-${target.index}`, pid: proc.pid, point });
      if (inFlight.length) evidence(ctx, action, { target: `worker-${target.index}`, inFlight: inFlight.length, jobIds: inFlight.slice(0, 10) });
    } else {
      proc.send({ kind: 'arm-kill', point });
      injected(ctx, action, { target: `worker-${target.index}`, pid: proc.pid, point, armed: true });
    }
  }
};

/** How long an armed `in-effect` stop waits for a job to reach the point before it gives up (no evidence: inconclusive). */
const STOP_POINT_WAIT_MS = 30_000;

/**
 * SIGSTOP a worker for forS seconds, then SIGCONT: alive but not heartbeating,
 * its leases run out. At `in-effect` every target is armed over IPC and the
 * first one whose job reaches the inside of an effect's transaction freezes
 * itself there (its report is the evidence); the others are disarmed, and the
 * frozen one is resumed forS seconds after it stopped.
 */
export const workerStop: Injector = async (action, ctx) => {
  if (action.params.point === 'in-effect') return stopInEffect(action, ctx);
  const startedT = ctx.recorder.now();
  const stopped = action.targets.flatMap((t) => {
    const proc = ctx.fleet.worker(t.index);
    if (!proc) return [];
    const inFlight = ctx.fleet.inFlight.get(t.index)?.size ?? 0;
    proc.kill('SIGSTOP');
    injected(ctx, action, { target: `worker-${t.index}`, pid: proc.pid, forS: action.params.forS, inFlight });
    return [{ proc, slot: t.index, inFlight }];
  });
  await holdUntil(ctx, action, startedT);
  for (const s of stopped) {
    s.proc.kill('SIGCONT');
    injected(ctx, action, { target: `worker-${s.slot}`, phase: 'end' });
    if (s.inFlight) evidence(ctx, action, { target: `worker-${s.slot}`, stalledJobs: s.inFlight });
  }
};

const stopInEffect: Injector = async (action, ctx) => {
  const startedT = ctx.recorder.now();
  const armed = action.targets.flatMap((t) => {
    const proc = ctx.fleet.worker(t.index);
    if (!proc) return [];
    proc.send({ kind: 'arm-stop' });
    injected(ctx, action, { target: `worker-${t.index}`, pid: proc.pid, point: 'in-effect', forS: action.params.forS, armed: true });
    return [{ proc, node: `worker-${t.index}` }];
  });
  // The handler module's report is recorded as this fault's evidence, by the worker's node.
  const bit = await watchFor(ctx, (e) => e.type === 'fault:evidence' && e.fault === 'worker-stop' && e.t >= startedT, STOP_POINT_WAIT_MS);
  for (const a of armed) if (a.node !== bit?.node) a.proc.send({ kind: 'disarm-stop' });
  const frozen = armed.find((a) => a.node === bit?.node);
  if (!bit || !frozen) return;
  const forMs = Number(action.params.forS) * 1000;
  // What the freeze is for: another worker takes the job over while the effect is still open.
  const jobId = bit.type === 'fault:evidence' ? bit.detail.jobId : undefined;
  const redelivered = watchFor(ctx, (e) => e.type === 'job:claimed' && e.jobId === jobId && e.node !== frozen.node && e.t >= bit.t, forMs);
  await ctx.clock.sleep(forMs, ctx.signal).catch(() => {});
  frozen.proc.kill('SIGCONT');
  injected(ctx, action, { target: frozen.node, phase: 'end' });
  const taken = await redelivered;
  if (taken?.type === 'job:claimed') {
    evidence(ctx, action, { target: frozen.node, jobId, redeliveredTo: taken.node, attempt: taken.attempt, afterStopMs: taken.t - bit.t });
  }
};
