// The built-in handler module of scenario runs. Each generated job's payload
// says what it is ({kind, op, params}); this module does what that kind of job
// does in production, and reports what the harness cannot see from outside.
// Loaded by bin/worker.ts inside each worker process.
import { systemClock } from '../engine/clock.ts';
import { Db } from '../engine/db.ts';
import type { Handler, Handlers, JobContext } from '../engine/handler.ts';
import { effectKey } from '../engine/job.ts';
import { harnessQueries as q } from './runner/queries.ts';

interface Payload {
  kind?: 'normal' | 'poison' | 'slow' | 'flaky' | 'effect';
  op?: number;
  params?: { durationMs?: number; failAttempts?: number };
}

/** Tells the harness something only this process saw (over the worker's IPC channel); resolves once it is sent. */
function report(name: string, payload: Record<string, unknown>): Promise<void> {
  if (!process.send || !process.connected) return Promise.resolve();
  return new Promise((resolve) => process.send!({ kind: 'event', name, payload, nodeTime: systemClock.now() }, () => resolve()));
}

// The harness arms a kill point over IPC: the next job to reach it SIGKILLs
// this process there, so "killed mid-handler" and "killed after the effect
// committed, before the worker heard back" happen exactly, not by luck.
// A stop point the same way: the next job to reach the inside of its effect's
// transaction (effect written, not committed) freezes this process there, and
// the harness resumes it later: a redelivery then overlaps the effect for sure.
let armedKill: 'mid-handler' | 'after-effect' | null = null;
let armedStop = false;
process.on('message', (m: { kind?: string; point?: typeof armedKill }) => {
  if (m?.kind === 'arm-kill') armedKill = m.point ?? null;
  if (m?.kind === 'arm-stop') armedStop = true;
  if (m?.kind === 'disarm-stop') armedStop = false;
});

function killHere(point: 'mid-handler' | 'after-effect', ctx: JobContext): void {
  if (armedKill !== point) return;
  void report('fault:bit', { fault: 'worker-kill', point, jobId: ctx.job.id, workerId: ctx.workerId });
  process.kill(process.pid, 'SIGKILL');
}

async function stopHere(ctx: JobContext): Promise<void> {
  if (!armedStop) return;
  armedStop = false;
  // The report must be sent before the process freezes: it is how the harness learns whom to resume.
  await report('fault:bit', { fault: 'worker-stop', point: 'in-effect', jobId: ctx.job.id, workerId: ctx.workerId });
  process.kill(process.pid, 'SIGSTOP');
}

// The shared dependency: during a dependency-outage fault it fails calls.
// The flag lives in the database and is read at most every 100 ms.
const dependencyChecked = process.env.STAMPEDE_HARNESS_DEPENDENCY === '1';
let dependency = { outage: false, errorRate: 1, readAt: -Infinity };
let db: Db | undefined;

async function callDependency(ctx: JobContext): Promise<void> {
  if (!dependencyChecked) return;
  if (systemClock.now() - dependency.readAt > 100) {
    db ??= new Db({ connectionString: process.env.DATABASE_URL!, maxConnections: 2, applicationName: 'stampede:worker:dependency' });
    const row = (await db.query(q.ReadDependency)).rows[0];
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
  const ms = (payload.params?.durationMs ?? 0) * (ctx.attempt > 1 && (payload.kind === 'slow' || payload.kind === 'effect') ? 0.5 : 1);
  switch (payload.kind) {
    case 'poison':
      // Crashes the process on every attempt, as a segfaulting parser or an OOM would.
      process.kill(process.pid, 'SIGKILL');
      return;
    case 'flaky':
      if (ctx.attempt <= (payload.params?.failAttempts ?? 2)) throw new Error(`flaky: planned failure on attempt ${ctx.attempt}`);
      return;
    case 'effect': {
      await callDependency(ctx);
      await systemClock.sleep(ms / 2, ctx.signal);
      killHere('mid-handler', ctx);
      const key = effectKey(ctx.job);
      // The effect's own call takes the other half, inside its transaction (a slow payment API): a
      // redelivery that overlaps it is what a dedup key written outside the transaction cannot stop.
      const { applied } = await ctx.effectOnce(async (tx) => {
        await tx.query(q.RecordEffect, [key, ctx.job.id, ctx.workerId]);
        await stopHere(ctx);
        if (ms > 0) await systemClock.sleep(ms / 2);
      });
      if (applied) void report('effect:applied', { jobId: ctx.job.id, key, workerId: ctx.workerId });
      killHere('after-effect', ctx);
      return;
    }
    default:
      // normal and slow: work for the planned time (a slow job's is its stall).
      await callDependency(ctx);
      await systemClock.sleep(ms / 2, ctx.signal);
      killHere('mid-handler', ctx);
      await systemClock.sleep(ms - ms / 2, ctx.signal);
  }
};

/** One handler for every queue the scenario uses (STAMPEDE_QUEUES, comma-separated). */
export default function handlers(): Handlers {
  const queues = (process.env.STAMPEDE_QUEUES ?? 'default').split(',');
  return Object.fromEntries(queues.map((queue) => [queue, handle]));
}
