import pg from 'pg';
import { harnessQueries as q } from '../../runner/queries.ts';
import { evidence, holdUntil, injected, watchFor, type Injector } from './context.ts';

/** pg_terminate_backend on the workers' connections (or every connection to the run's database). */
export const terminateBackends: Injector = async (action, ctx) => {
  const all = action.params.scope === 'all';
  const n = (await ctx.db.query(q.TerminateWorkerBackends, [all])).rows[0].n as number;
  injected(ctx, action, { scope: all ? 'all' : 'workers', terminated: n });
  if (n > 0) evidence(ctx, action, { terminated: n });
};

/** Restarts the Postgres server; it stays down for downS seconds. Only a server this run started can be restarted. */
export const dbRestart: Injector = async (action, ctx) => {
  const mode = (action.params.mode as 'fast' | 'immediate' | undefined) ?? 'fast';
  const downMs = ((action.params.downS as number | undefined) ?? 1) * 1000;
  if (!ctx.server.halt || !ctx.server.restart) {
    injected(ctx, action, { skipped: `the server came from ${ctx.server.kind}; only an embedded server can be restarted` });
    return;
  }
  injected(ctx, action, { mode, downMs });
  await ctx.server.halt(mode);
  await ctx.clock.sleep(downMs).catch(() => {});
  await ctx.server.restart();
  injected(ctx, action, { phase: 'end' });
  const upT = ctx.recorder.now();
  const claimed = await watchFor(ctx, (e) => e.type === 'job:claimed' && e.t > upT, 30_000);
  if (claimed) evidence(ctx, action, { firstClaimAfterRestartMs: claimed.t - upT });
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
