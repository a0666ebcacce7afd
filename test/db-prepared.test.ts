import { afterAll, describe, expect, it } from 'vitest';
import { Db, prepared } from '../engine/db.ts';
import { enqueue, enqueueMany, enqueueQueries } from '../engine/enqueue.ts';
import { claimJobs } from '../engine/worker/claim.ts';
import { SeededRng } from '../engine/rng.ts';
import { workerQueries } from '../engine/worker/queries.ts';
import { Worker } from '../engine/worker/worker.ts';
import { freshDatabase } from './support/db.ts';
import { countByState } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { url, db } = await freshDatabase();
const pools: Db[] = [];
afterAll(async () => {
  await Promise.all(pools.map((d) => d.close()));
});

/** A pool of one connection, so that pg_prepared_statements (per session) shows what that pool prepared. */
function onePool(preparedStatements?: boolean): Db {
  const d = new Db({ connectionString: url, maxConnections: 1, preparedStatements });
  pools.push(d);
  return d;
}

const preparedHere = async (d: Db) =>
  (await d.query(`SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'stampede\\_%' ORDER BY name`)).rows as { name: string; statement: string }[];

describe('prepared statements', () => {
  it('prepares a statement once per connection, named by its text: the same text runs again unparsed, a changed text is a new statement', async () => {
    const d = onePool();
    expect((await d.query(prepared('SELECT $1::int + 1 AS n', [1]))).rows[0].n).toBe(2);
    expect((await d.query(prepared('SELECT $1::int + 1 AS n', [41]))).rows[0].n).toBe(42);
    expect((await preparedHere(d)).map((r) => r.statement)).toEqual(['SELECT $1::int + 1 AS n']);
    await d.query(prepared('SELECT $1::int + 2 AS n', [1]));
    const names = (await preparedHere(d)).map((r) => r.name);
    expect(names).toHaveLength(2);
    expect(new Set(names).size).toBe(2);
  });

  it('with preparedStatements: false, runs the same query unnamed and prepares nothing', async () => {
    const d = onePool(false);
    expect((await d.query(prepared('SELECT $1::int + 1 AS n', [1]))).rows[0].n).toBe(2);
    expect(await preparedHere(d)).toEqual([]);
  });

  it('a worker on either setting drains its queue; only the default prepares the claim and the completion', async () => {
    for (const [preparedStatements, queue] of [
      [true, 'prep-on'],
      [false, 'prep-off'],
    ] as const) {
      const d = new Db({ connectionString: url, maxConnections: 6, preparedStatements });
      pools.push(d);
      await enqueueMany(d, Array.from({ length: 50 }, () => ({ queue, payload: {} })));
      const w = new Worker({ db: d, handlers: { [queue]: () => {} }, concurrency: 5, rng: new SeededRng(3), pollMs: 20 });
      w.start();
      try {
        await until(`${queue} drained`, async () => (await countByState(d, queue)).done === 50, 20_000, 20);
      } finally {
        await w.stop(0);
      }
      // What the connections of the worker's pool prepared, read over those same connections.
      const seen = new Set<string>();
      const clients = await Promise.all(Array.from({ length: 6 }, () => d.pool.connect()));
      try {
        for (const c of clients) {
          for (const r of (await c.query(`SELECT statement FROM pg_prepared_statements WHERE name LIKE 'stampede\\_%'`)).rows) seen.add(r.statement);
        }
      } finally {
        for (const c of clients) c.release();
      }
      expect(seen).toEqual(preparedStatements ? new Set([workerQueries.ClaimJobs, workerQueries.CompleteJobs]) : new Set());
    }
  });

  // Postgres plans a prepared statement's first five runs with their values, then keeps a generic plan only if it
  // costs no more than theirs did on average. The claim used to show the planner its queue list and its LIMITs, so a
  // plan with the values (one queue, LIMIT 20) always looked cheaper and every claim was planned again. Negative
  // control: the claim with `FROM unnest($1::text[]) AS q(queue) JOIN gate ...` and `LIMIT $2 * 2` (custom_plans 8).
  const plansOf = async (d: Db, statement: string) =>
    (await d.query(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1`, [statement])).rows[0] as
      | { generic_plans: number; custom_plans: number }
      | undefined;

  it('the claim, the completion and a single enqueue settle on a generic plan: five runs planned, the rest not', async () => {
    for (const [what, analyzed] of [
      ['a table never analyzed', false],
      ['20,000 due jobs, analyzed', true],
    ] as const) {
      const queue = analyzed ? 'plans-analyzed' : 'plans-fresh';
      await enqueueMany(db, Array.from({ length: analyzed ? 20_000 : 200 }, () => ({ queue, payload: {} })));
      if (analyzed) await db.query('ANALYZE stampede.jobs');
      const d = onePool();
      for (let i = 0; i < 8; i++) {
        const claimed = await claimJobs(d, { queues: [queue], leaseMs: [30_000], limit: 10, workerId: 'plans', agingMs: 5_000 });
        expect(claimed, `claim ${i + 1} on ${what}`).toHaveLength(10);
        const done = await d.query(prepared(workerQueries.CompleteJobs, [claimed.map((j) => j.id).join(','), claimed.map((j) => j.leaseToken).join(',')]));
        expect(done.rowCount).toBe(10);
        await enqueue(d, queue, { i });
      }
      expect(await plansOf(d, workerQueries.ClaimJobs), `the claim on ${what}`).toEqual({ custom_plans: 5, generic_plans: 3 });
      expect(await plansOf(d, workerQueries.CompleteJobs), `the completion on ${what}`).toEqual({ custom_plans: 5, generic_plans: 3 });
      expect(await plansOf(d, enqueueQueries.EnqueueOne), `the enqueue on ${what}`).toEqual({ custom_plans: 5, generic_plans: 3 });
    }
  });

  it("an enqueue inside the caller's transaction, or on a Db with preparedStatements: false, prepares nothing", async () => {
    const off = onePool(false);
    await enqueue(off, 'plans-off', {});
    expect(await preparedHere(off)).toEqual([]);
    const d = onePool();
    await d.transaction(async (tx) => {
      await enqueue(tx, 'plans-tx', {});
    });
    expect(await preparedHere(d)).toEqual([]);
    await enqueue(d, 'plans-tx', {});
    expect((await preparedHere(d)).map((r) => r.statement)).toEqual([enqueueQueries.EnqueueOne]);
  });
});
