// What wakes a worker's claim loop besides a NOTIFY and the poll: a slot
// freed while the worker held its claim back for want of one claims the next
// job, and after a full claim the next one waits for the event loop's turn to
// end, so quick jobs free their slots first and it takes them all in one
// batch. The clock is manual and LISTEN off, so no poll and no NOTIFY wakes
// anything here.
import type pg from 'pg';
import { afterAll, afterEach, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../engine/clock.ts';
import { Db } from '../engine/db.ts';
import { enqueueMany } from '../engine/enqueue.ts';
import { SeededRng } from '../engine/rng.ts';
import { workerQueries } from '../engine/worker/queries.ts';
import { Worker } from '../engine/worker/worker.ts';
import type { WorkerOptions } from '../engine/worker/options.ts';
import { freshDatabase } from './support/db.ts';
import { countByState } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { url } = await freshDatabase();

/** A Db that counts the claims it runs and how many jobs each found. */
class CountedClaims extends Db {
  readonly found: number[] = [];

  override async query<R extends pg.QueryResultRow = any>(text: string | pg.QueryConfig, params?: unknown[]): Promise<pg.QueryResult<R>> {
    const res = await super.query<R>(text, params);
    if (typeof text !== 'string' && text.text === workerQueries.ClaimJobs) this.found.push(res.rowCount ?? 0);
    return res;
  }
}

const db = new CountedClaims({ connectionString: url, maxConnections: 6 });
afterAll(() => db.close());
const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(0)));
  db.found.length = 0;
});

function startWorker(options: Omit<WorkerOptions, 'db' | 'clock' | 'listen' | 'rescue' | 'rng'>): Worker {
  const w = new Worker({ db, clock: new ManualClock(Date.now()), listen: false, rescue: false, rng: new SeededRng('wakeups'), ...options });
  workers.push(w);
  w.start();
  return w;
}

it('a slot freed while the worker held claims back for want of one claims the next job, with no poll and no NOTIFY', async () => {
  await enqueueMany(db, Array.from({ length: 3 }, (_, i) => ({ queue: 'held', payload: { i } })));
  let ran = 0;
  // The handler outlasts the loop's next turn, which finds no free slot and holds its claim back.
  startWorker({ handlers: { held: () => systemClock.sleep(20).then(() => void ran++) }, concurrency: 1, claimAhead: 0 });
  await until('all three jobs done', async () => (await countByState(db, 'held')).done === 3);
  expect(ran).toBe(3);
  expect(db.found.slice(0, 3)).toEqual([1, 1, 1]); // one job per claim: each came after a freed slot
});

it('after a full claim of quick jobs, the next claim takes every slot they freed in one batch', async () => {
  await enqueueMany(db, Array.from({ length: 16 }, (_, i) => ({ queue: 'batch', payload: { i } })));
  // Four slots and four claimed ahead: a claim takes up to eight.
  startWorker({ handlers: { batch: () => {} }, concurrency: 4, claimAhead: 4 });
  await until('all sixteen jobs done', async () => (await countByState(db, 'batch')).done === 16);
  // Claimed the moment the first four handlers had returned, the second claim would have found four slots free, not eight.
  expect(db.found.slice(0, 2)).toEqual([8, 8]);
});
