// Backpressure: a worker whose completions do not commit (a slow or stuck
// database) keeps claiming only while at most one claim's worth of finished
// jobs waits to be recorded, so the next claim overlaps the last completion
// but unrecorded outcomes never pile up without bound. The test drives runOnce
// itself and holds the completion UPDATE in the Db it hands the worker.
import type pg from 'pg';
import { afterAll, afterEach, expect, it } from 'vitest';
import { Db } from '../engine/db.ts';
import { enqueueMany } from '../engine/enqueue.ts';
import { SeededRng } from '../engine/rng.ts';
import { workerQueries } from '../engine/worker/queries.ts';
import { Worker } from '../engine/worker/worker.ts';
import { freshDatabase } from './support/db.ts';
import { countByState } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { url } = await freshDatabase();

/** A Db whose completion UPDATEs wait until `release()`; every other query runs at once. */
class HeldCompletions extends Db {
  held = 0;
  private open!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.open = resolve));

  override query<R extends pg.QueryResultRow = any>(text: string | pg.QueryConfig, params?: unknown[]): Promise<pg.QueryResult<R>> {
    if (typeof text !== 'string' && text.text === workerQueries.CompleteJobs) {
      this.held++;
      return this.gate.then(() => super.query<R>(text, params));
    }
    return super.query<R>(text, params);
  }

  release(): void {
    this.open();
  }
}

const db = new HeldCompletions({ connectionString: url, maxConnections: 6 });
afterAll(() => db.close());
const workers: Worker[] = [];
afterEach(async () => {
  db.release();
  await Promise.all(workers.splice(0).map((w) => w.stop(0)));
});

it('stops claiming once one claim of finished jobs waits to be recorded, and claims again when it commits', async () => {
  await enqueueMany(db, Array.from({ length: 20 }, (_, i) => ({ queue: 'backpressure', payload: { i } })));
  let ran = 0;
  // Two slots and two claimed ahead, set, so the buffer stays that size (left unset it would grow after the first
  // full claims, and one claim's worth with it: claim-ahead.ts): one claim takes up to four jobs.
  const worker = new Worker({ db, handlers: { backpressure: () => void ran++ }, concurrency: 2, claimAhead: 2, listen: false, rescue: false, rng: new SeededRng('bp') });
  workers.push(worker);

  expect(await worker.runOnce()).toBe(4);
  await until('the first claim ran and its completion is held', () => ran === 4 && db.held === 1);
  // Four finished jobs wait to be recorded, one claim's worth: the next claim may still overlap them.
  expect(await worker.runOnce()).toBe(4);
  await until('the second claim ran', () => ran === 8);
  // Now eight wait, more than one claim's worth: no more work until the database catches up.
  expect(await worker.runOnce()).toBe(0);
  expect(await worker.runOnce()).toBe(0);
  expect(ran).toBe(8);
  expect((await countByState(db, 'backpressure')).done ?? 0).toBe(0); // the fault held: nothing was recorded

  db.release();
  await until('the held completions committed', async () => (await countByState(db, 'backpressure')).done === 8);
  expect(await worker.runOnce()).toBe(4);
});
