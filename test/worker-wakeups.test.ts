// What wakes a worker's claim loop besides a NOTIFY and the poll. A handler
// finishing claims again only while claims keep finding jobs, or when the
// worker had held a claim back for its own state (no free slot); a recorded
// outcome only in the second case. An empty claim means the queue was
// drained, and claims woken by every freed slot and every recorded outcome
// were most of a busy worker's statements. After a full claim the next one
// waits for the event loop's turn to end, so quick jobs free their slots
// first and it takes them all in one batch. The clock is manual and LISTEN
// off, so no poll and no NOTIFY wakes anything here: every claim counted is
// one the wake policy made.
import type pg from 'pg';
import { afterAll, afterEach, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../engine/clock.ts';
import { Db } from '../engine/db.ts';
import { enqueueMany } from '../engine/enqueue.ts';
import { Events } from '../engine/events.ts';
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

it('claims again when a handler finishes after a claim that found jobs, and not after an empty one nor for a recorded outcome', async () => {
  await enqueueMany(db, [{ queue: 'wake', payload: { i: 0 } }]);
  const events = new Events();
  const recorded = events.waitFor('job:completed');
  startWorker({ handlers: { wake: () => {} }, concurrency: 4, events });
  await recorded;
  expect((await countByState(db, 'wake')).done).toBe(1);
  await until('the claim the finished handler woke', () => db.found.length >= 2);
  await systemClock.sleep(100); // time for a claim the recorded outcome would have woken
  // The first claim found the job; its handler finishing woke the second, which found nothing; the outcome recorded
  // after it woke none.
  expect(db.found).toEqual([1, 0]);
});

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
