// Claim-ahead: a worker holds up to `claimAhead` claimed jobs beyond its
// concurrency, waiting for a slot. Each waiting job is still this worker's
// claim, so every guarantee of a running claim holds for it too: its lease is
// renewed while it waits, it is handed back uncharged at stop, a suspect
// waits until none is held, and without heartbeats there is no claim-ahead.
// The tests drive runOnce themselves and wait on events and rows, never on time.
import { afterEach, expect, it } from 'vitest';
import { setQueueLimits } from '../engine/control/index.ts';
import { systemClock } from '../engine/clock.ts';
import { enqueue, enqueueMany } from '../engine/enqueue.ts';
import { Events } from '../engine/events.ts';
import { SeededRng } from '../engine/rng.ts';
import { AHEAD_CAP, AHEAD_WAIT_MS, claimAheadFor } from '../engine/worker/claim-ahead.ts';
import { Worker } from '../engine/worker/worker.ts';
import type { WorkerOptions } from '../engine/worker/options.ts';
import { freshDatabase } from './support/db.ts';
import { jobRow } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { db } = await freshDatabase();
const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(0)));
});

/** A worker of one slot and one job claimed ahead, not started: the test calls runOnce. The queue's handler waits on `gate` for job `slowId`. */
function gatedWorker(queue: string, o: Partial<WorkerOptions> = {}) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const started: number[] = [];
  const events = new Events();
  const worker = new Worker({
    db,
    events,
    handlers: {
      [queue]: async (_payload, ctx) => {
        started.push(ctx.job.id);
        if (started.length === 1) await gate;
      },
    },
    listen: false,
    rescue: false,
    concurrency: 1,
    claimAhead: 1,
    rng: new SeededRng(queue),
    ...o,
  });
  workers.push(worker);
  return { worker, events, started, open };
}

/** gatedWorker with two jobs claimed in one claim: the first running (held by the gate), the second waiting for its slot. */
async function oneRunningOneWaiting(queue: string, o: Partial<WorkerOptions> = {}) {
  const w = gatedWorker(queue, o);
  const running = await enqueue(db, queue, {});
  const waiting = await enqueue(db, queue, {});
  expect(await w.worker.runOnce()).toBe(2);
  await until('the first job runs', () => w.started.length === 1);
  return { ...w, running, waiting };
}

it("renews a waiting job's lease while it waits for a slot, then runs it under the same claim", async () => {
  const { events, started, open, running, waiting } = await oneRunningOneWaiting('ahead-lease', { leaseMs: 300, heartbeatMs: 60 });
  expect(started).toEqual([running.id]);
  // Renewed five times: it has waited well past its 300 ms lease, and the lease still runs.
  let renewals = 0;
  const renewed = new Promise<void>((resolve) => {
    events.on('lease:renewed', (e) => {
      if (e.jobId === waiting.id && ++renewals === 5) resolve();
    });
  });
  await renewed;
  const row = (await db.query(`SELECT state::text, attempts, lease_expires_at > now() AS leased FROM stampede.jobs WHERE id = $1`, [waiting.id])).rows[0];
  expect(row).toEqual({ state: 'claimed', attempts: 1, leased: true });
  expect(started).toEqual([running.id]);
  const completed = events.waitFor('job:completed', (e) => e.jobId === waiting.id);
  open();
  await completed;
  expect(started).toEqual([running.id, waiting.id]);
  expect((await jobRow(db, waiting.id)).attempts).toBe(1);
});

it('hands a waiting job back uncharged at stop, without running it', async () => {
  const { worker, events, started, open, running, waiting } = await oneRunningOneWaiting('ahead-stop');
  const released = events.waitFor('lease:released', (e) => e.jobId === waiting.id);
  const stopped = worker.stop(20_000);
  await released;
  const row = await jobRow(db, waiting.id);
  expect([row.state, row.attempts]).toEqual(['pending', 0]);
  open();
  await stopped;
  expect(started).toEqual([running.id]);
  expect((await jobRow(db, running.id)).state).toBe('done');
});

it('starts no job it claimed ahead once stop() is called, even when a slot frees while a claim is still under way', async () => {
  const queue = 'ahead-stop-mid-claim';
  const { worker, events, started, open } = gatedWorker(queue, { claimAhead: 2, pollMs: 10 });
  // A limited queue: each claim first takes the queue's lock (stampede.claim_gate). Held here, it keeps the loop's
  // next claim waiting, so stop() has to wait for the loop while the running job finishes and frees its slot.
  await setQueueLimits(db, queue, { maxInFlight: 100, maxStartsPerSecond: null }, { by: 'test', reason: 'a claim to wait on', allowNew: true });
  const running = await enqueue(db, queue, {});
  const waiting = await enqueue(db, queue, {});
  const stoppingSeen = events.waitFor('worker:stopping');
  worker.start();
  await until('the first job runs, the second waits', () => started.length === 1);
  const holder = await db.pool.connect();
  try {
    await holder.query('SELECT pg_advisory_lock(stampede.queue_lock_key($1))', [queue]);
    await until('a claim waits on the queue lock', async () => (await db.query(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).rows[0].n > 0);
    const stopped = worker.stop(20_000);
    await stoppingSeen;
    const completed = events.waitFor('job:completed', (e) => e.jobId === running.id);
    open();
    await completed;
    expect(started).toEqual([running.id]);
    const released = events.waitFor('lease:released', (e) => e.jobId === waiting.id);
    await holder.query('SELECT pg_advisory_unlock(stampede.queue_lock_key($1))', [queue]);
    await released;
    await stopped;
  } finally {
    holder.release();
  }
  expect(started).toEqual([running.id]);
  const row = await jobRow(db, waiting.id);
  expect([row.state, row.attempts]).toEqual(['pending', 0]);
});

it('claims a suspect only once no job waits in its claim-ahead buffer', async () => {
  const { worker, events, started, open } = gatedWorker('ahead-suspect', { rescueIntervalMs: 1 });
  await enqueue(db, 'ahead-suspect', {});
  const waiting = await enqueue(db, 'ahead-suspect', {});
  expect(await worker.runOnce()).toBe(2);
  await until('the first job runs', () => started.length === 1);
  const suspect = await enqueue(db, 'ahead-suspect', {});
  await db.query('UPDATE stampede.jobs SET crash_count = 1 WHERE id = $1', [suspect.id]);
  // Two of this worker's claims are open (one running, one waiting): the suspect would share their crash.
  expect(await worker.runOnce()).toBe(0);
  expect((await jobRow(db, suspect.id)).state).toBe('pending');
  const completed = events.waitFor('job:completed', (e) => e.jobId === waiting.id);
  open();
  await completed;
  await until('every earlier completion committed', async () => (await worker.runOnce()) === 1);
  expect((await jobRow(db, suspect.id)).state).not.toBe('pending');
});

it('claims nothing ahead when heartbeats are off: a waiting job would have only its lease to cover the wait', async () => {
  const { worker, started, open } = gatedWorker('ahead-nohb', { heartbeatMs: 0, claimAhead: 5 });
  await enqueue(db, 'ahead-nohb', {});
  const second = await enqueue(db, 'ahead-nohb', {});
  expect(await worker.runOnce()).toBe(1);
  await until('the first job runs', () => started.length === 1);
  expect(await worker.runOnce()).toBe(0);
  expect((await jobRow(db, second.id)).state).toBe('pending');
  open();
});

/** A worker of `concurrency` 2 over a backlog of 300 jobs, claims driven by the test; returns each claim's size once the last claim's handlers finished. */
async function claimSizes(queue: string, o: Partial<WorkerOptions>, handler: () => unknown, claims: number): Promise<number[]> {
  await enqueueMany(db, Array.from({ length: 300 }, (_, i) => ({ queue, payload: { i } })));
  const events = new Events();
  let finished = 0;
  events.on('job:completed', () => void finished++);
  const worker = new Worker({ db, events, handlers: { [queue]: handler }, listen: false, rescue: false, concurrency: 2, rng: new SeededRng(queue), ...o });
  workers.push(worker);
  const sizes: number[] = [];
  for (let i = 0; i < claims; i++) {
    sizes.push(await worker.runOnce());
    const total = sizes.reduce((a, b) => a + b, 0);
    await until(`the ${total} claimed jobs finish`, () => finished === total);
  }
  return sizes;
}

it('grows the claim-ahead buffer at the default once a claim came back full and handlers are fast, up to the pace bound', async () => {
  const sizes = await claimSizes('ahead-grows', {}, () => {}, 4);
  // The first two claims take concurrency + claimAhead (2 + 2): the first has no handler's pace yet. From the second,
  // full with sub-millisecond handlers, the buffer grows toward 2 slots x 100 ms / 1 ms = 200, twofold a claim.
  expect(sizes).toEqual([4, 4, 2 + 4, 2 + 8]);
  expect(2 + 8).toBeLessThanOrEqual(2 + Math.floor((2 * AHEAD_WAIT_MS) / 1));
});

it('keeps the buffer at the default when the handlers are slow, and at a claimAhead that was set', async () => {
  // 2 slots x 100 ms / 100 ms or more is at most 2 jobs of wait: no more than the default claims.
  expect(await claimSizes('ahead-slow', {}, () => systemClock.sleep(AHEAD_WAIT_MS + 20), 3)).toEqual([4, 4, 4]);
  expect(await claimSizes('ahead-set', { claimAhead: 2 }, () => {}, 3)).toEqual([4, 4, 4]);
});

it('sizes a grown buffer by the pace of the handlers and by how long its jobs waited, within its cap, and only after a full claim', () => {
  const at = { base: 10, concurrency: 10, lastClaimFull: true, current: 500, longestWaitMs: 0, maxWaitMs: 500 };
  expect(claimAheadFor({ ...at, meanHandlerMs: 0.2 })).toBe(AHEAD_CAP);
  expect(claimAheadFor({ ...at, meanHandlerMs: 5 })).toBe(200);
  expect(claimAheadFor({ ...at, meanHandlerMs: 500 })).toBe(10);
  expect(claimAheadFor({ ...at, meanHandlerMs: 0.2, lastClaimFull: false })).toBe(10);
  expect(claimAheadFor({ ...at, meanHandlerMs: Number.NaN })).toBe(10);
  // A job waited 2 s for a slot where half a heartbeat period is 500 ms: a quarter of the buffer, never below base.
  expect(claimAheadFor({ ...at, meanHandlerMs: 0.2, longestWaitMs: 2_000 })).toBe(125);
  expect(claimAheadFor({ ...at, meanHandlerMs: 0.2, current: 20, longestWaitMs: 2_000 })).toBe(10);
  // Waits within the bound: it grows back at most twofold a claim.
  expect(claimAheadFor({ ...at, meanHandlerMs: 0.2, current: 125, longestWaitMs: 400 })).toBe(250);
});

it('gives up a waiting job whose renewal cannot land once its lease may end, and hands it back while the slot is still busy', async () => {
  const { events, started, open, running, waiting } = await oneRunningOneWaiting('ahead-expire', { leaseMs: 1_000, heartbeatMs: 100 });
  // A transaction holding the waiting job's row: its renewals queue on the lock and none lands, as in a partition.
  const expired = events.waitFor('lease:lost', (e) => e.jobId === waiting.id && e.phase === 'expired');
  const holder = await db.pool.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM stampede.jobs WHERE id = $1 FOR UPDATE', [waiting.id]);
    await expired;
    const deferred = events.waitFor('job:deferred', (e) => e.jobId === waiting.id);
    await holder.query('ROLLBACK');
    // Handed back (uncharged, due at once) with the first job's handler still holding the only slot: the given-up
    // job left the buffer when it expired, not when a slot freed.
    await deferred;
    const row = await jobRow(db, waiting.id);
    expect([row.state, row.attempts]).toEqual(['pending', 0]);
  } finally {
    holder.release();
  }
  expect(started).toEqual([running.id]);
  const completed = events.waitFor('job:completed', (e) => e.jobId === running.id);
  open();
  await completed;
  expect(started).toEqual([running.id]);
});
