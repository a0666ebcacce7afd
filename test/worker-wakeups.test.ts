// What wakes a worker's claim loop besides a NOTIFY and the poll. A handler
// finishing claims again while claims keep finding jobs, or when the worker
// had held a claim back for its own state (no free slot); a recorded outcome
// in the second case, and after the first empty claim (an in-flight limit
// counts a job until its completion commits). Woken by every freed slot and
// every recorded outcome, the claims (most of them empty) were most of a busy
// worker's statements at 500 jobs/s. An empty claim looks again 10 ms later, then
// backs off: SKIP LOCKED passes over rows another claim is locking, so empty
// does not mean drained. After a full claim the next one waits for the event
// loop's turn to end, so quick jobs free their slots first and it takes them
// all in one batch. The clock is manual and LISTEN off, so no poll and no
// NOTIFY wakes anything here: every claim counted is one the wake policy made.
import pg from 'pg';
import { afterAll, afterEach, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../engine/clock.ts';
import { Db } from '../engine/db.ts';
import { setQueueLimits } from '../engine/control/index.ts';
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

function startWorker(options: Omit<WorkerOptions, 'db' | 'listen' | 'rescue' | 'rng'>): Worker {
  const w = new Worker({ db, clock: new ManualClock(Date.now()), listen: false, rescue: false, rng: new SeededRng('wakeups'), ...options });
  workers.push(w);
  w.start();
  return w;
}

it('claims again when a handler finishes after a claim that found jobs; after empty claims, a freed slot and a recorded outcome claim nothing', async () => {
  await enqueueMany(db, [
    { queue: 'wake', payload: { hold: true } },
    { queue: 'wake', payload: { hold: false } },
  ]);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const events = new Events();
  const quickDone = events.waitFor('job:completed');
  startWorker({ handlers: { wake: (p: { hold: boolean }) => (p.hold ? held : undefined) }, concurrency: 4, events });
  await quickDone;
  await systemClock.sleep(100); // the claims the quick job's handler and its recorded outcome woke
  // One claim found both; the quick one's handler finishing woke a second, which found nothing; its outcome recorded woke
  // at most one more (the one an in-flight limit needs), which found nothing either.
  const before = [...db.found];
  expect(before[0]).toBe(2);
  expect(before.length === 2 || before.length === 3).toBe(true);
  expect(before.slice(1).every((n) => n === 0)).toBe(true);
  const heldDone = events.waitFor('job:completed');
  release();
  await heldDone;
  await systemClock.sleep(100);
  // The held job's slot freed and its outcome recorded after empty claims: no claim (the look again waits for node time,
  // which stands still here).
  expect(db.found).toEqual(before);
});

it('an empty claim that passed over rows another transaction had locked looks again 10 ms later and takes them', async () => {
  const [job] = await enqueueMany(db, [{ queue: 'contended', payload: {} }]);
  // Another claim in flight, as SKIP LOCKED sees it: a transaction holding the due row's lock.
  const other = new pg.Client({ connectionString: url });
  await other.connect();
  try {
    await other.query('BEGIN');
    await other.query('SELECT id FROM stampede.jobs WHERE id = $1 FOR UPDATE', [job.id]);
    const clock = new ManualClock(Date.now());
    startWorker({ handlers: { contended: () => {} }, clock });
    await until('the first claim', () => db.found.length >= 1);
    expect(db.found).toEqual([0]); // the lock made it empty: the due job was there, and passed over
    await other.query('COMMIT');
    // Nothing of its own running, nothing recorded, no NOTIFY and no poll: only the look again can find the job.
    clock.advance(9);
    await systemClock.sleep(100);
    expect(db.found).toEqual([0]);
    clock.advance(1);
    await until('the job done by the look again', async () => (await countByState(db, 'contended')).done === 1);
    expect(db.found.slice(0, 2)).toEqual([0, 1]);
  } finally {
    await other.end();
  }
});

it("a queue's in-flight limit of one runs its jobs back to back: the outcome recorded claims the next, with no poll and no look again", async () => {
  await setQueueLimits(db, 'one-at-a-time', { maxInFlight: 1, maxStartsPerSecond: null }, { by: 'test', reason: 'one in flight', allowNew: true });
  await enqueueMany(db, Array.from({ length: 3 }, (_, i) => ({ queue: 'one-at-a-time', payload: { i } })));
  startWorker({ handlers: { 'one-at-a-time': () => {} }, concurrency: 4 });
  // Node time stands still, so each next job can only come from a wake: the claim woken by a handler finishing may find
  // the limit still spent by that job (its completion not yet committed); the claim its recorded outcome wakes finds room.
  await until('all three jobs done', async () => (await countByState(db, 'one-at-a-time')).done === 3);
  expect(db.found.filter((n) => n > 0)).toEqual([1, 1, 1]);
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
