import pg from 'pg';
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

/**
 * Restarts the Postgres server; it stays down for downS seconds. Only a
 * server this run started can be restarted. `fast` and `immediate` are
 * pg_ctl's shutdown modes; `crash` SIGKILLs the postmaster mid-load, as the
 * OOM killer or a power cut would, so the restart runs crash recovery from
 * the WAL. Evidence that a crash really happened: a new postmaster (pid and
 * start time changed), a probe connection opened before it is dead after
 * it, and the server's own start log says it recovered.
 */
export const dbRestart: Injector = async (action, ctx) => {
  const mode = (action.params.mode as 'fast' | 'immediate' | 'crash' | undefined) ?? 'fast';
  const downMs = ((action.params.downS as number | undefined) ?? 1) * 1000;
  if (!ctx.server.halt || !ctx.server.restart || !ctx.server.crash) {
    injected(ctx, action, { skipped: `the server came from ${ctx.server.kind}; only an embedded server can be restarted` });
    return;
  }
  const before = await probe(ctx);
  const factsBefore = await serverFacts(before);
  const pidBefore = ctx.server.pid;
  injected(ctx, action, { mode, downMs, postmasterPid: pidBefore, backends: factsBefore.backends });
  if (mode === 'crash') await ctx.server.crash();
  else await ctx.server.halt(mode);
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
