import type { HistoryEvent } from '../../history.ts';
import { harnessQueries } from '../../runner/queries.ts';
import type { FaultAction } from '../plan.ts';
import { evidence, holdUntil, injected, watchFor, type InjectionContext, type Injector } from './context.ts';

/**
 * SIGKILL a worker. At `any` point the kill lands whenever it lands, and it
 * bit if the worker had jobs in flight; at `mid-handler`, `in-effect` or `after-effect`
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

/** How long an armed stop point waits for a job to reach it before it gives up (no evidence: inconclusive). */
const STOP_POINT_WAIT_MS = 30_000;
/** How long a report of a stop taken just as the wait ended may take to arrive. */
const STOP_REPORT_LATE_MS = 5_000;

/**
 * SIGSTOP a worker for forS seconds, then SIGCONT: alive but not heartbeating,
 * its leases run out. At a `point` every target is armed over IPC and the
 * first one whose job reaches it freezes itself there (its report is the
 * evidence); the others run on, since the database gives the stop to the
 * first worker to arrive. The frozen one is resumed forS seconds
 * after it stopped, or with `resume: 'on-takeover'` as soon as another worker
 * claims its job (forS at most), so what it does next overlaps the new owner.
 */
export const workerStop: Injector = async (action, ctx) => {
  const point = (action.params.point as string | undefined) ?? 'any';
  if (point !== 'any') return stopAtPoint(point, action, ctx);
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

async function stopAtPoint(point: string, action: FaultAction, ctx: InjectionContext): Promise<void> {
  const startedT = ctx.recorder.now();
  const onTakeover = action.params.resume === 'on-takeover';
  await ctx.db.query(harnessQueries.ArmStopPoint, [action.seq, point]);
  const armed = action.targets.flatMap((t) => {
    const proc = ctx.fleet.worker(t.index);
    if (!proc) return [];
    proc.send({ kind: 'arm-stop', point, seq: action.seq });
    injected(ctx, action, { target: `worker-${t.index}`, pid: proc.pid, point, forS: action.params.forS, armed: true });
    return [{ proc, node: `worker-${t.index}` }];
  });
  // The handler module's report is recorded as this fault's evidence, by the worker's node.
  const stopReport = (e: HistoryEvent) => e.type === 'fault:evidence' && e.fault === 'worker-stop' && e.detail.point === point && e.t >= startedT;
  let bit = await watchFor(ctx, stopReport, STOP_POINT_WAIT_MS);
  if (!bit) {
    // Close the point so no worker freezes with nobody left to resume it; if one took it just now, its report is on the way.
    // (An unreachable database counts as closed: no worker can take the stop through it either.)
    const closed = await ctx.db.query(harnessQueries.CloseStopPoint, [action.seq]).catch(() => ({ rowCount: 1 }));
    if (closed.rowCount) {
      injected(ctx, action, { point, closed: `no job reached the point within ${STOP_POINT_WAIT_MS / 1000} s` });
      return;
    }
    bit = await watchFor(ctx, stopReport, STOP_REPORT_LATE_MS);
  }
  const frozen = armed.find((a) => a.node === bit?.node);
  if (bit?.type !== 'fault:evidence' || !frozen) return;
  const { jobId, attempt } = bit.detail;
  // What the freeze is for: another worker takes the job over while the frozen one still holds it.
  const takeover = (e: HistoryEvent) => e.type === 'job:claimed' && e.jobId === jobId && e.node !== frozen.node && e.attempt > Number(attempt);
  const forMs = Number(action.params.forS) * 1000;
  const taken = watchFor(ctx, takeover, forMs);
  const resumeNow = new AbortController();
  if (onTakeover) void taken.then(() => resumeNow.abort());
  await ctx.clock.sleep(forMs, AbortSignal.any([ctx.signal, resumeNow.signal])).catch(() => {});
  frozen.proc.kill('SIGCONT');
  injected(ctx, action, { target: frozen.node, phase: 'end' });
  const claim = await taken;
  if (claim?.type === 'job:claimed') {
    evidence(ctx, action, { target: frozen.node, jobId, redeliveredTo: claim.node, attempt: claim.attempt, afterStopMs: claim.t - bit.t });
  }
}
