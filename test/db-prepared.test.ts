import { afterAll, describe, expect, it } from 'vitest';
import { Db, prepared } from '../engine/db.ts';
import { enqueueMany } from '../engine/enqueue.ts';
import { SeededRng } from '../engine/rng.ts';
import { workerQueries } from '../engine/worker/queries.ts';
import { Worker } from '../engine/worker/worker.ts';
import { freshDatabase } from './support/db.ts';
import { countByState } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { url } = await freshDatabase();
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
});
