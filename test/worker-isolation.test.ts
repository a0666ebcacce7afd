// A suspect runs alone, also apart from completions still being written: a job
// whose handler returned but whose completion has not committed is still this
// worker's claim, and if the suspect killed the process before it committed,
// the rescuer would charge that innocent job with the suspect's crash (found
// by crash-loop-isolation on poison-herd). Real Postgres; the commit is held
// back by a row lock, so the test waits on conditions, not on time.
import { afterEach, expect, it } from 'vitest';
import { enqueue } from '../engine/enqueue.ts';
import { Events } from '../engine/events.ts';
import { SeededRng } from '../engine/rng.ts';
import { Worker } from '../engine/worker/worker.ts';
import { freshDatabase } from './support/db.ts';
import { jobRow } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { db } = await freshDatabase();
const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(0)));
});

it("claims a suspect only once every earlier job's completion has committed, not when its handler returned", async () => {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const events = new Events();
  // Not started: the test drives runOnce itself. A suspect check on every call (rescueIntervalMs 1).
  const worker = new Worker({ db, events, handlers: { iso: () => gate }, listen: false, rescue: false, rescueIntervalMs: 1, concurrency: 4, rng: new SeededRng(5) });
  workers.push(worker);
  const innocent = await enqueue(db, 'iso', {});
  expect(await worker.runOnce()).toBe(1);

  // Hold the innocent's row so its completion cannot commit, then let its handler return.
  const lock = await db.pool.connect();
  try {
    await lock.query('BEGIN');
    await lock.query('SELECT 1 FROM stampede.jobs WHERE id = $1 FOR UPDATE', [innocent.id]);
    open();
    await until('the handler returned (its slot is free)', () => worker.activeJobs === 0);
    const suspect = await enqueue(db, 'iso', {});
    await db.query('UPDATE stampede.jobs SET crash_count = 1 WHERE id = $1', [suspect.id]);

    // The completion is still being written: the suspect must wait for it.
    expect(await worker.runOnce()).toBe(0);
    expect((await jobRow(db, suspect.id)).state).toBe('pending');

    const completed = events.waitFor('job:completed', (e) => e.jobId === innocent.id);
    await lock.query('ROLLBACK');
    await completed;
    expect(await worker.runOnce()).toBe(1);
    expect((await jobRow(db, suspect.id)).state).not.toBe('pending');
  } finally {
    lock.release();
  }
});
