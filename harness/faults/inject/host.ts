import { readFileSync } from 'node:fs';
import pg from 'pg';
import { harnessQueries as q } from '../../runner/queries.ts';
import type { FaultAction } from '../plan.ts';
import { evidence, holdUntil, injected, watchFor, type InjectionContext, type Injector } from './context.ts';

/** How long after a database-host fault clears the first claim is waited for, as evidence that work resumed. */
const RESUME_WAIT_MS = 30_000;

/** A connection of the nemesis's own, outside every pool. */
async function connection(ctx: InjectionContext, role: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: ctx.url, application_name: `stampede:nemesis:${role}` });
  c.on('error', () => {});
  await c.connect();
  return c;
}

/** A process's state letter from /proc (T: stopped), or '?' when it is gone or not Linux. */
function processState(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return '?';
  }
}

/** The first claim after `fromT`, as how long after it work resumed; null if none within the wait. */
async function resumedAfter(ctx: InjectionContext, fromT: number): Promise<number | null> {
  const claim = await watchFor(ctx, (e) => e.type === 'job:claimed' && e.t > fromT, RESUME_WAIT_MS);
  return claim ? claim.t - fromT : null;
}

/** Refuses a fault that would act on a server this run did not start: it would pause, or turn read-only, the user's own server. */
function ownServerOnly(action: FaultAction, ctx: InjectionContext): boolean {
  if (ctx.server.kind === 'embedded' && ctx.server.pause) return true;
  const why = `${action.fault} acts on the whole server, so it runs only on the embedded server this run started; this run's server came from ${ctx.server.kind === 'url' ? 'DATABASE_URL (an outside server)' : ctx.server.kind}`;
  ctx.log.warn(why);
  injected(ctx, action, { skipped: why });
  return false;
}

/**
 * SIGSTOP every process of the embedded server for forS seconds, then
 * SIGCONT (a VM paused by its hypervisor, a host swapping hard, a storage
 * freeze). Connections stay up; every query hangs. Evidence: the
 * processes were seen stopped in /proc, and a probe query sent during the
 * pause was answered only after it.
 */
export const dbPause: Injector = async (action, ctx) => {
  if (!ownServerOnly(action, ctx)) return;
  const startedT = ctx.recorder.now();
  const probe = await connection(ctx, 'probe');
  let pids: number[] = [];
  try {
    pids = ctx.server.pause!();
    injected(ctx, action, { forS: action.params.forS, processes: pids.length, postmasterPid: pids[0] });
    let answeredAtT: number | undefined;
    const answered = probe.query(q.DbNow).then(
      () => (answeredAtT = ctx.recorder.now()),
      () => undefined,
    );
    // A stop is delivered when each process next runs: look once they have had a moment to take it.
    await ctx.clock.sleep(100, ctx.signal).catch(() => {});
    const stopped = pids.filter((p) => processState(p) === 'T').length;
    await holdUntil(ctx, action, startedT);
    const resumedT = ctx.recorder.now();
    ctx.server.resume!();
    injected(ctx, action, { phase: 'end' });
    await answered;
    const resumedMs = await resumedAfter(ctx, resumedT);
    if (stopped > 0 && answeredAtT !== undefined && answeredAtT >= resumedT) {
      evidence(ctx, action, { processesStopped: stopped, of: pids.length, probeAnsweredAfterResumeMs: answeredAtT - resumedT, firstClaimAfterMs: resumedMs });
    }
  } finally {
    ctx.server.resume!(); // also when interrupted mid-pause: never leave a stopped server behind
    await probe.end().catch(() => {});
  }
};

/**
 * Every free connection slot taken by the nemesis for forS seconds (up to
 * max_connections: the workers connect as the same role, so the superuser
 * reserve is theirs too), and the workers' connections terminated once, so
 * they reconnect into a full server and are refused with 53300
 * too_many_connections; the slots they freed are taken too. Evidence: the
 * server refused the nemesis itself (it was full) and a worker was refused.
 */
export const connectionsExhausted: Injector = async (action, ctx) => {
  const startedT = ctx.recorder.now();
  const held: pg.Client[] = [];
  let refused: string | undefined;
  const fill = async () => {
    for (;;) {
      const batch = await Promise.all(
        Array.from({ length: 16 }, () =>
          connection(ctx, 'slot').catch((err: { code?: string; message: string }) => {
            refused ??= err.code ?? err.message;
            return null;
          }),
        ),
      );
      for (const c of batch) if (c) held.push(c);
      if (batch.some((c) => c === null) || ctx.signal.aborted) return;
    }
  };
  try {
    const slots = (await ctx.db.query(q.ConnectionSlots)).rows[0];
    await fill();
    const terminated = (await held[0]?.query(q.TerminateWorkerBackends, [false]))?.rows[0].n ?? 0;
    await fill();
    injected(ctx, action, { forS: action.params.forS, maxConnections: slots.max_connections, held: held.length, refused, workerConnectionsTerminated: terminated });
    const seen = await watchFor(ctx, (e) => e.type === 'db:error' && e.kind === 'too_many_connections' && e.t >= startedT, (action.params.forS as number) * 1000);
    await holdUntil(ctx, action, startedT);
    if (refused === '53300' && seen?.type === 'db:error') evidence(ctx, action, { held: held.length, refused, workerRefused: seen.node, workerConnectionsTerminated: terminated });
  } finally {
    await Promise.all(held.map((c) => c.end().catch(() => {})));
  }
  const clearedT = ctx.recorder.now();
  injected(ctx, action, { phase: 'end' });
  const resumedMs = await resumedAfter(ctx, clearedT);
  if (resumedMs !== null) evidence(ctx, action, { phase: 'end', firstClaimAfterMs: resumedMs });
};

/**
 * The primary turned read-only while connections stay up, for forS seconds:
 * `default_transaction_read_only = on` by ALTER SYSTEM and a reload. Every
 * session picks it up at its next statement; a transaction already open
 * when the reload arrives finishes as it began (read-write), each one after
 * it is read-only, and every write is refused with 25006
 * read_only_sql_transaction. Then reset and reloaded. Embedded server only:
 * on an outside server it would turn every database read-only. Evidence:
 * a write of the nemesis's was refused with 25006, and a worker's was too.
 */
export const readOnly: Injector = async (action, ctx) => {
  if (!ownServerOnly(action, ctx)) return;
  const startedT = ctx.recorder.now();
  const admin = await connection(ctx, 'read-only');
  try {
    await admin.query(q.SetReadOnly);
    await admin.query(q.ReloadConf);
    injected(ctx, action, { forS: action.params.forS });
    const refused = await refusedWrite(ctx);
    const seen = await watchFor(ctx, (e) => e.type === 'db:error' && e.kind === 'read_only' && e.t >= startedT, (action.params.forS as number) * 1000);
    await holdUntil(ctx, action, startedT);
    if (refused && seen?.type === 'db:error') evidence(ctx, action, { probeRefused: refused, workerRefused: seen.node });
  } finally {
    await admin.query(q.SessionReadWrite).catch(() => {});
    await admin.query(q.ResetReadOnly).catch(() => {});
    await admin.query(q.ReloadConf).catch(() => {});
    await admin.end().catch(() => {});
  }
  const clearedT = ctx.recorder.now();
  injected(ctx, action, { phase: 'end' });
  const resumedMs = await resumedAfter(ctx, clearedT);
  if (resumedMs !== null) evidence(ctx, action, { phase: 'end', firstClaimAfterMs: resumedMs });
};

/** A fresh session's write, until the reload has reached it: the SQLSTATE it was refused with (25006), or undefined. */
async function refusedWrite(ctx: InjectionContext): Promise<string | undefined> {
  for (let i = 0; i < 20 && !ctx.signal.aborted; i++) {
    const c = await connection(ctx, 'probe');
    const code = await c.query(q.WriteProbe).then(
      () => undefined,
      (err: { code?: string }) => err.code,
    );
    await c.end().catch(() => {});
    if (code) return code;
    await ctx.clock.sleep(100, ctx.signal).catch(() => {});
  }
  return undefined;
}

/**
 * stampede.jobs locked for forS seconds. `lock`: a transaction holds ACCESS
 * EXCLUSIVE (an operator's LOCK TABLE, a VACUUM FULL). `ddl-behind-reader`:
 * a long reader holds ACCESS SHARE and a DDL (a migration's ADD COLUMN)
 * queues behind it for ACCESS EXCLUSIVE, so every later statement on the
 * table queues behind the DDL, the classic migration outage; at the end the
 * reader ends, the DDL runs and is rolled back. Evidence: sessions were seen
 * waiting on the table's lock.
 */
export const lockJobsTable: Injector = async (action, ctx) => {
  const startedT = ctx.recorder.now();
  const mode = (action.params.mode as 'lock' | 'ddl-behind-reader' | undefined) ?? 'lock';
  const holder = await connection(ctx, 'lock');
  const ddl = mode === 'ddl-behind-reader' ? await connection(ctx, 'ddl') : undefined;
  let ddlDone: Promise<unknown> = Promise.resolve();
  try {
    await holder.query('BEGIN');
    await holder.query(mode === 'lock' ? q.LockJobs : q.ReadJobs);
    if (ddl) {
      await ddl.query('BEGIN');
      ddlDone = ddl.query(q.QueueDdl).catch(() => {});
    }
    injected(ctx, action, { forS: action.params.forS, mode });
    await ctx.clock.sleep(Math.min(1_000, (action.params.forS as number) * 500), ctx.signal).catch(() => {});
    const waiting = (await ctx.db.query(q.JobsLockWaiters)).rows[0].n as number;
    await holdUntil(ctx, action, startedT);
    if (waiting > (ddl ? 1 : 0)) evidence(ctx, action, { mode, sessionsWaiting: waiting });
  } finally {
    await holder.query('ROLLBACK').catch(() => {});
    await ddlDone;
    await ddl?.query('ROLLBACK').catch(() => {});
    await Promise.all([holder.end().catch(() => {}), ddl?.end().catch(() => {})]);
  }
  const clearedT = ctx.recorder.now();
  injected(ctx, action, { phase: 'end' });
  const resumedMs = await resumedAfter(ctx, clearedT);
  if (resumedMs !== null) evidence(ctx, action, { phase: 'end', firstClaimAfterMs: resumedMs });
};
