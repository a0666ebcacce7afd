import { afterAll, describe, expect, it } from 'vitest';
import { Db } from '../engine/db.ts';
import { enqueue } from '../engine/enqueue.ts';
import { claimJobs } from '../engine/worker/claim.ts';
import { installDbClock, stepDbClock } from '../harness/db-clock/db-clock.ts';
import { freshDatabase } from './support/db.ts';

// The simulated database clock (docs/time.md), checked on the real server: one step moves
// every reader of the database's time in sessions already open, and nothing else.
const t = await freshDatabase();
await installDbClock(t.db);
// Sessions opened after the install get the search_path that shadows now(); the ones before it do not.
const engine = new Db({ connectionString: t.url, maxConnections: 2 });
afterAll(() => engine.close());

const nowOf = async (db: Db, fn = 'now()') => ((await db.query(`SELECT ${fn} AS t`)).rows[0].t as Date).getTime();
const claim = (limit = 10) => claimJobs(engine, { queues: ['dbclock'], leaseMs: [30_000], limit, workerId: 'w', agingMs: 1_000 });

describe('the simulated database clock', () => {
  it('moves now() in open sessions, the engine claim and plpgsql triggers together, and leaves pg_catalog.now() alone', async () => {
    const before = await nowOf(engine);
    expect(Math.abs(before - (await nowOf(engine, 'pg_catalog.now()')))).toBeLessThan(50);
    // A statement prepared before the step, whose plan inlined the old clock, must read the new one after it.
    const prepared = async () => ((await engine.query({ name: 'db-clock-now', text: 'SELECT now() AS t' })).rows[0].t as Date).getTime();
    expect(Math.abs((await prepared()) - before)).toBeLessThan(5_000);
    // Due in 30 minutes by the database clock: not claimable yet.
    const job = await enqueue(engine, 'dbclock', { kind: 'normal' }, { delayMs: 30 * 60_000 });
    expect(await claim()).toHaveLength(0);

    const step = await stepDbClock(t.db, 3_600_000);
    expect(step.delayed).toBe(1);
    expect(step.dbAfter.getTime() - step.dbBefore.getTime()).toBe(3_600_000);
    const after = await nowOf(engine);
    expect(after - before).toBeGreaterThanOrEqual(3_600_000);
    expect(after - before).toBeLessThan(3_600_000 + 5_000);
    expect((await prepared()) - before).toBeGreaterThanOrEqual(3_600_000);
    // Inlined: the plan reads the server's clock plus a constant, as cheap as production's now(), not a call that runs a query.
    const plan = (await engine.query('EXPLAIN VERBOSE SELECT count(*) FROM stampede.jobs WHERE run_at <= now()')).rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).toContain("(pg_catalog.now() + '01:00:00'::interval)");
    expect(plan).not.toContain('stampede_sim');
    // The real clock did not move.
    expect(Math.abs((await nowOf(engine, 'pg_catalog.now()')) - before)).toBeLessThan(5_000);

    const claimed = await claim();
    expect(claimed.map((j) => j.id)).toEqual([job.id]);
    expect(claimed[0].dbClaimedAt.getTime()).toBeGreaterThanOrEqual(before + 3_600_000);
    // The state-machine trigger (plpgsql, no SET search_path of its own) stamps updated_at with the moved clock.
    const row = (await engine.query('SELECT updated_at, created_at FROM stampede.jobs WHERE id = $1', [job.id])).rows[0];
    expect(row.updated_at.getTime()).toBeGreaterThanOrEqual(before + 3_600_000);
    // A column DEFAULT now() was bound to pg_catalog.now() when the table was made: not moved (see docs/time.md).
    expect(row.created_at.getTime()).toBeLessThan(before + 5_000);
  });

  it('leaves a session opened before the install on the real clock (why the runner opens its pools after it)', async () => {
    const real = await nowOf(t.db, 'pg_catalog.now()');
    expect(Math.abs((await nowOf(t.db)) - real)).toBeLessThan(50);
  });
});
