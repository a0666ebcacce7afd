import pg from 'pg';
import type { HistoryEvent } from '../../history.ts';
import { harnessQueries as q } from '../../runner/queries.ts';
import { evidence, holdUntil, injected, watchFor, type InjectionContext, type Injector } from './context.ts';

/** pg_terminate_backend on the workers' connections (or every connection to the run's database). */
export const terminateBackends: Injector = async (action, ctx) => {
  const all = action.params.scope === 'all';
  const n = (await ctx.db.query(q.TerminateWorkerBackends, [all])).rows[0].n as number;
  injected(ctx, action, { scope: all ? 'all' : 'workers', terminated: n });
  if (n > 0) evidence(ctx, action, { terminated: n });
};

/** A connection of the nemesis's own that lives across the fault: if the server really went away, it is dead after. */
async function probe(ctx: InjectionContext): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: ctx.url, application_name: 'stampede:nemesis:probe' });
  c.on('error', () => {});
  await c.connect();
  return c;
}

async function serverFacts(c: pg.Client): Promise<{ startedAt: string; backends: number }> {
  const r = (await c.query(q.ServerFacts)).rows[0];
  return { startedAt: (r.started_at as Date).toISOString(), backends: r.backends as number };
}

/** What the workers were told was committed during a lull: at risk unless each COMMIT waited for its WAL flush. */
interface AtRisk {
  completions: number;
  claims: number;
  enqueues: number;
}

/**
 * The moment before a crash that puts acknowledgements at risk: for lullMs
 * the load generator offers nothing and the server's WAL writer is stopped
 * (EmbeddedPostgres.stallWalWriter), while the workers go on claiming and
 * completing (a backlog to drain: a herd just before). Any synchronous COMMIT
 * flushes every earlier commit's WAL with its own, so a steady producer
 * would make the workers' unflushed commits durable by accident, and the WAL
 * writer hands full pages to the kernel, which a SIGKILL of the processes
 * does not lose; with both held, what a power cut would lose is lost. A
 * lull of 0.5 s is within what a power cut loses under the default
 * wal_writer_delay (200 ms; up to 3 times that is unflushed).
 */
async function lull(ctx: InjectionContext, lullMs: number): Promise<{ resume: () => number; atRisk: AtRisk; walWriterStalled: boolean; fromT: number }> {
  const fromT = ctx.recorder.now();
  const resumeLoad = ctx.load.silence();
  // No resume: the crash that follows kills the stopped writer with the rest of the server.
  const walWriterStalled = ctx.server.stallWalWriter?.() !== undefined;
  await ctx.clock.sleep(lullMs, ctx.signal).catch(() => {});
  const untilT = ctx.recorder.now();
  const count = (type: HistoryEvent['type']) => ctx.recorder.events.filter((e) => e.type === type && e.t >= fromT && e.t <= untilT).length;
  const atRisk = { completions: count('job:completed'), claims: count('job:claimed'), enqueues: count('enqueue:ok') };
  return { resume: resumeLoad, atRisk, walWriterStalled, fromT };
}

/**
 * Restarts the Postgres server; it stays down for downS seconds. Only a
 * server this run started can be restarted. `fast` and `immediate` are
 * pg_ctl's shutdown modes; `crash` SIGKILLs the postmaster mid-load, as the
 * OOM killer or a power cut would, so the restart runs crash recovery from
 * the WAL; with lullS, after a lull that puts the workers' latest
 * acknowledgements at risk (see lull()). Evidence that a crash really
 * happened: a new postmaster (pid and start time changed), a probe
 * connection opened before it is dead after it, and the server's own start
 * log says it recovered; with a lull, how many acknowledgements it put at
 * risk.
 */
export const dbRestart: Injector = async (action, ctx) => {
  const mode = (action.params.mode as 'fast' | 'immediate' | 'crash' | undefined) ?? 'fast';
  const downMs = ((action.params.downS as number | undefined) ?? 1) * 1000;
  const lullMs = mode === 'crash' ? ((action.params.lullS as number | undefined) ?? 0) * 1000 : 0;
  if (!ctx.server.halt || !ctx.server.restart || !ctx.server.crash) {
    injected(ctx, action, { skipped: `the server came from ${ctx.server.kind}; only an embedded server can be restarted` });
    return;
  }
  const before = await probe(ctx);
  const factsBefore = await serverFacts(before);
  const pidBefore = ctx.server.pid;
  const lulled = lullMs > 0 ? await lull(ctx, lullMs) : undefined;
  // Recorded at the kill itself; a lull before it is told here, so one crash is one injection.
  const lullDetail = lulled ? { lull: { fromT: lulled.fromT, lullMs, walWriterStalled: lulled.walWriterStalled } } : {};
  injected(ctx, action, { mode, downMs, postmasterPid: pidBefore, backends: factsBefore.backends, ...lullDetail });
  if (mode === 'crash') await ctx.server.crash();
  else await ctx.server.halt(mode);
  // The producers speak again at once: an enqueue in flight while the server is gone has an unknown outcome.
  const offersDropped = lulled?.resume();
  await ctx.clock.sleep(downMs).catch(() => {});
  await ctx.server.restart();
  injected(ctx, action, { phase: 'end' });
  const upT = ctx.recorder.now();
  const probeDropped = await before.query(q.DbNow).then(
    () => false,
    () => true,
  );
  await before.end().catch(() => {});
  const after = await probe(ctx);
  const factsAfter = await serverFacts(after).finally(() => after.end().catch(() => {}));
  const recovered = /not properly shut down|redo starts|interrupted/i.test(ctx.server.startLog ?? '');
  const newServer = ctx.server.pid !== pidBefore && factsAfter.startedAt !== factsBefore.startedAt && probeDropped;
  const claimed = await watchFor(ctx, (e) => e.type === 'job:claimed' && e.t > upT, 30_000);
  if (claimed && newServer && (mode !== 'crash' || recovered)) {
    evidence(ctx, action, {
      mode,
      postmasterPid: { before: pidBefore, after: ctx.server.pid },
      startedAt: { before: factsBefore.startedAt, after: factsAfter.startedAt },
      backendsBefore: factsBefore.backends,
      probeDropped,
      ...(mode === 'crash' ? { crashRecovery: recovered } : {}),
      ...(lulled ? { lull: { lullMs, walWriterStalled: lulled.walWriterStalled, offersDropped, acknowledgedInLull: lulled.atRisk } } : {}),
      firstClaimAfterRestartMs: claimed.t - upT,
    });
  }
};

/** Holds `connections` connections busy for forS seconds, starving everyone else of slots. */
export const poolExhaust: Injector = async (action, ctx) => {
  const startedT = ctx.recorder.now();
  const want = action.params.connections as number;
  const clients: pg.Client[] = [];
  for (let i = 0; i < want; i++) {
    const c = new pg.Client({ connectionString: ctx.url, application_name: 'stampede:nemesis' });
    c.on('error', () => {});
    try {
      await c.connect();
      clients.push(c);
    } catch {
      break; // the server is out of slots: exhausted
    }
  }
  injected(ctx, action, { requested: want, held: clients.length });
  if (clients.length) evidence(ctx, action, { held: clients.length });
  await holdUntil(ctx, action, startedT);
  await Promise.all(clients.map((c) => c.end().catch(() => {})));
  injected(ctx, action, { phase: 'end' });
};

/** Keeps a REPEATABLE READ transaction open for forS seconds: the xmin horizon is pinned and dead tuples pile up. */
export const xminHold: Injector = async (action, ctx) => {
  const startedT = ctx.recorder.now();
  const c = new pg.Client({ connectionString: ctx.url, application_name: 'stampede:nemesis:xmin' });
  c.on('error', () => {});
  await c.connect();
  try {
    await c.query(q.HoldXmin);
    injected(ctx, action, { forS: action.params.forS });
    const seen = await watchFor(ctx, (e) => e.type === 'sample' && (ctx.sampler.latest?.xminHorizonAgeMs ?? 0) > 1000, ((action.params.forS as number) + 5) * 1000);
    if (seen) evidence(ctx, action, { xminHorizonAgeMs: ctx.sampler.latest?.xminHorizonAgeMs, deadTuples: ctx.sampler.latest?.jobsDeadTuples });
    await holdUntil(ctx, action, startedT);
    await c.query('COMMIT');
  } finally {
    await c.end().catch(() => {});
  }
  injected(ctx, action, { phase: 'end' });
};
