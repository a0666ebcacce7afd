import { evidence, holdUntil, injected, type Injector } from './context.ts';

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

/** SIGSTOP a worker for forS seconds, then SIGCONT: alive but not heartbeating, its leases run out. */
export const workerStop: Injector = async (action, ctx) => {
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
