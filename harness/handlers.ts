// The built-in handler module of scenario runs. Each generated job's payload
// says what it is ({kind, op, params}); this module does what that kind of job
// does in production, and reports what the harness cannot see from outside.
// Loaded by bin/worker.ts inside each worker process.
import { systemClock } from '../engine/clock.ts';
import { eventMessage } from '../engine/supervisor/event-message.ts';
import { toParent } from '../engine/supervisor/event-shipper.ts';
import type { NodeEvents } from '../engine/events.ts';
import { Db } from '../engine/db.ts';
import type { Handler, Handlers, JobContext } from '../engine/handler.ts';
import { effectKey } from '../engine/job.ts';
import { recordIntent } from '../engine/effects/outbox.ts';
import { intentKeyOf } from './outbox-keys.ts';
import { harnessQueries as q } from './runner/queries.ts';

interface Payload {
  kind?: 'normal' | 'poison' | 'slow' | 'flaky' | 'effect' | 'downstream' | 'failing' | 'outbox';
  op?: number;
  params?: { durationMs?: number; failAttempts?: number };
}

/** What this module reports to the harness beside the worker's own events (NodeEvents), by name. */
export interface HandlerReports {
  /** An armed kill or stop point was reached by this job: the evidence that the fault bit (the history's `fault:evidence`). */
  'fault:bit': { fault: 'worker-kill' | 'worker-stop' | 'worker-restart'; point: string; jobId: number; attempt?: number; workerId: string };
  /** The handler asked for its effect (called effectOnce): the engine's answer, the key's lock or a hand-back, is timed from here. */
  'effect:started': { jobId: number; attempt: number; workerId: string };
  /** The effect's transaction committed: the effect was applied once, under `key`. */
  'effect:applied': { jobId: number; key: string; workerId: string };
  /**
   * A span of attempt `attempt` of a job ended (a scenario with `otel`, harness/otel-export.ts): the engine's
   * attempt span (`consumer`) or the handler's own (`internal`), its ids, its parent's span id and its links.
   */
  'otel:span': {
    jobId: number;
    attempt: number;
    name: string;
    kind: 'consumer' | 'internal';
    traceId: string;
    spanId: string;
    parentSpanId: string | null;
    links: { traceId: string; spanId: string }[];
    error: boolean;
  };
  /**
   * A collection of the worker's OpenTelemetry meter provider (a scenario with `otel`): each counter's value and
   * each histogram's count of the engine's meter, by metric, queue, operation and error.type (null: none).
   */
  'otel:metrics': {
    workerId: string;
    points: { name: string; queue: string; operation: string; errorType: string | null; value: number }[];
  };
}

/** Everything a worker running this module reports. */
export type WorkerReports = NodeEvents & HandlerReports;

/** Tells the harness something only this process saw (shipped with the worker's own events, in order). */
export function report<N extends keyof HandlerReports>(name: N, payload: HandlerReports[N]): void {
  reportOf<HandlerReports, N>(name, payload);
}

/** `report` for a process whose reports are another map (a peer engine's worker reports what it knows of the engine's events). */
export function reportOf<M, N extends keyof M>(name: N, payload: M[N]): void {
  toParent.ship(eventMessage<M, N>(name, payload, systemClock.now()));
}

/**
 * Resolves once every report queued so far is written to the IPC channel: before this process kills or stops
 * itself, or exits, what it reported must have left it (the shipper would send it only at the end of the turn).
 */
export function flushReports(): Promise<void> {
  return toParent.flush();
}

// The harness arms a kill point over IPC: the next job to reach it SIGKILLs
// this process there, so "killed mid-handler" and "killed after the effect
// committed, before the worker heard back" happen exactly, not by luck
// (`in-effect`: inside the effect's transaction, which then rolls back).
// Stop points the same way: the first job to reach one, on any armed worker,
// freezes its process there (SIGSTOP) and the harness resumes it later.
// `in-effect`: inside the effect's transaction, the effect written and not
// committed. `before-report`: a slow job whose work is done, before its
// handler returns, so its completion is sent only after the resume.
// `mid-slow-job`: a slow job halfway through its work, so after the resume its
// handler still runs and its next heartbeat is what learns the lease is gone.
type KillPoint = 'mid-handler' | 'in-effect' | 'after-effect';
type StopPoint = 'in-effect' | 'before-report' | 'mid-slow-job';
let armedKill: KillPoint | null = null;
/** Armed stop points, with the fault action's seq that the first worker to arrive takes in the database. */
const armedStops = new Map<StopPoint, number>();
process.on('message', (m: { kind?: string; point?: string; seq?: number }) => {
  if (m?.kind === 'arm-kill') armedKill = (m.point as KillPoint | undefined) ?? null;
  if (m?.kind === 'arm-stop') armedStops.set(m.point as StopPoint, Number(m.seq));
});

/** Who reached a kill or stop point: the job (its history id), its attempt and the worker. */
export interface AtPoint {
  jobId: number;
  attempt: number;
  workerId: string;
}

const at = (ctx: JobContext): AtPoint => ({ jobId: ctx.job.id, attempt: ctx.attempt, workerId: ctx.workerId });

/** SIGKILLs this process if the harness armed `point` (a peer engine's handler reaches the same points). */
export function killHere(point: KillPoint, ctx: AtPoint): void {
  if (armedKill !== point) return;
  report('fault:bit', { fault: 'worker-kill', point, jobId: ctx.jobId, workerId: ctx.workerId });
  // The flush's write is attempted at once, as a lone report's was: the kill below follows it.
  void flushReports();
  process.kill(process.pid, 'SIGKILL');
}

export async function stopHere(point: StopPoint, ctx: AtPoint): Promise<void> {
  const seq = armedStops.get(point);
  if (seq === undefined) return;
  armedStops.delete(point);
  const taken = await harnessDb().query(q.TakeStopPoint, [seq, ctx.workerId]);
  if (!taken.rowCount) return; // another worker got there first
  // The report must be sent before the process freezes: it is how the harness learns whom to resume.
  report('fault:bit', { fault: 'worker-stop', point, jobId: ctx.jobId, attempt: ctx.attempt, workerId: ctx.workerId });
  await flushReports();
  process.kill(process.pid, 'SIGSTOP');
}

let db: Db | undefined;
/** The harness's own tables (the dependency flag, stop points), through a small pool of this process. */
export function harnessDb(): Db {
  db ??= new Db({ connectionString: process.env.DATABASE_URL!, maxConnections: 2, applicationName: 'stampede:worker:harness' });
  return db;
}

// The shared dependency: during a dependency-outage fault it fails calls.
// The flag lives in the database and is read at most every 100 ms.
const dependencyChecked = process.env.STAMPEDE_HARNESS_DEPENDENCY === '1';
let dependency = { outage: false, errorRate: 1, readAt: -Infinity };

async function callDependency(ctx: JobContext): Promise<void> {
  if (!dependencyChecked) return;
  if (systemClock.now() - dependency.readAt > 100) {
    const row = (await harnessDb().query(q.ReadDependency)).rows[0];
    dependency = { outage: row.outage, errorRate: row.error_rate, readAt: systemClock.now() };
  }
  // Which calls fail during a partial outage is decided by the job and attempt, not by chance, so a replay fails the same ones.
  const draw = ((ctx.job.id * 2654435761 + ctx.attempt * 40503) % 1000) / 1000;
  if (dependency.outage && draw < dependency.errorRate) throw new Error('dependency unavailable (503)');
}

const handle: Handler<Payload> = async (payload, ctx) => {
  // A retry works half the planned time: a slow first attempt (a hung call, a
  // GC pause) is what stalls past the lease; the redelivery is the ordinary
  // case, so it finishes within a lease and the job does not stall forever.
  const ms = (payload.params?.durationMs ?? 0) * (ctx.attempt > 1 && (payload.kind === 'slow' || payload.kind === 'effect' || payload.kind === 'outbox') ? 0.5 : 1);
  switch (payload.kind) {
    case 'poison':
      // Crashes the process on every attempt, as a segfaulting parser or an OOM would. What this process reported
      // before the crash (the jobs it claimed and completed just now, this job's claim) leaves its IPC channel first:
      // it happened, and a history that lost it would show a job done by a claim nobody saw.
      await flushReports();
      process.kill(process.pid, 'SIGKILL');
      return;
    case 'failing':
      // A permanently broken payload: it fails every attempt until its budget is spent.
      throw new Error(`failing: planned failure on attempt ${ctx.attempt}`);
    case 'flaky':
      if (ctx.attempt <= (payload.params?.failAttempts ?? 2)) throw new Error(`flaky: planned failure on attempt ${ctx.attempt}`);
      return;
    case 'effect':
    case 'outbox': {
      await callDependency(ctx);
      await systemClock.sleep(ms / 2, ctx.signal);
      killHere('mid-handler', at(ctx));
      const key = effectKey(ctx.job);
      // When the effect was asked for: no-effect-lock-wait times the engine's answer (the lock, or a
      // hand-back when another holder has the key open) from here.
      report('effect:started', { jobId: ctx.job.id, attempt: ctx.attempt, workerId: ctx.workerId });
      // The effect's own call takes the other half, inside its transaction (a slow payment API): a
      // redelivery that overlaps it is what a dedup key written outside the transaction cannot stop.
      const { applied } = await ctx.effectOnce(async (tx) => {
        await tx.query(q.RecordEffect, [key, ctx.job.id, ctx.workerId]);
        // An outbox job also records an intent in the same transaction: it exists iff the effect committed.
        // The payload names the attempt that wrote it: the sink reports it, so a delivered intent of an attempt
        // that rolled back shows (its effect row, if any, names another writer).
        if (payload.kind === 'outbox') await recordIntent(tx, { topic: 'notify', key: intentKeyOf(key), payload: { jobId: ctx.job.id, writer: ctx.workerId } });
        killHere('in-effect', at(ctx)); // written, not committed: the transaction rolls back with the connection
        await stopHere('in-effect', at(ctx));
        if (ms > 0) await systemClock.sleep(ms / 2);
      });
      if (applied) report('effect:applied', { jobId: ctx.job.id, key, workerId: ctx.workerId });
      killHere('after-effect', at(ctx));
      return;
    }
    case 'downstream': {
      // A call to the harness's downstream (harness/runner/downstream.ts), which refuses calls beyond its capacity.
      const base = process.env.STAMPEDE_HARNESS_DOWNSTREAM_URL;
      if (!base) throw new Error('a downstream job needs STAMPEDE_HARNESS_DOWNSTREAM_URL: the scenario must declare `downstream`');
      await callDependency(ctx);
      // Counted per queue and key: the same tenant in two queues is two budgets.
      const key = ctx.job.fairnessKey === null ? '' : `&key=${encodeURIComponent(`${ctx.job.queue}/${ctx.job.fairnessKey}`)}`;
      const res = await fetch(`${base}/call?job=${ctx.job.id}&attempt=${ctx.attempt}${key}`, { signal: ctx.signal });
      await res.text();
      if (res.status !== 200) throw new Error(`downstream overloaded (${res.status})`);
      return;
    }
    default:
      // normal and slow: work for the planned time (a slow job's is its stall).
      await callDependency(ctx);
      await systemClock.sleep(ms / 2, ctx.signal);
      killHere('mid-handler', at(ctx));
      if (payload.kind === 'slow') await stopHere('mid-slow-job', at(ctx));
      await systemClock.sleep(ms - ms / 2, ctx.signal);
      if (payload.kind === 'slow') await stopHere('before-report', at(ctx));
  }
};

// A scenario with `otel`: its workers register the OpenTelemetry SDK before any job runs (harness/otel-export.ts).
const otel = process.env.STAMPEDE_HARNESS_OTEL === '1' ? await import('./otel-export.ts') : null;

/** One handler for every queue the scenario uses (STAMPEDE_QUEUES, comma-separated); in its own span when traced. */
export default function handlers(): Handlers {
  const queues = (process.env.STAMPEDE_QUEUES ?? 'default').split(',');
  const h = otel ? otel.traced(handle) : handle;
  return Object.fromEntries(queues.map((queue) => [queue, h]));
}
