// Issue 13, item 4: a retry whose effect is held by a frozen worker's
// uncommitted transaction must not wait behind it holding its own claim
// (then any death of its worker meanwhile, unrelated to the job, is charged
// to the job as a crash). effectOnce tries the key's lock instead, and a busy
// key hands the claim back uncharged for a retry shortly. Real Postgres; the
// effect-lock-wait mutant is the negative control.
import { afterEach, describe, expect, it } from 'vitest';
import { Db } from '../engine/db.ts';
import { enqueue } from '../engine/enqueue.ts';
import { Events, type EngineEvents } from '../engine/events.ts';
import type { Handler } from '../engine/handler.ts';
import { SeededRng } from '../engine/rng.ts';
import { Worker } from '../engine/worker/worker.ts';
import { freshDatabase } from './support/db.ts';
import { jobRow } from './support/jobs.ts';
import { useMutant } from './support/mutant.ts';
import { until } from './support/wait.ts';

const { db, url } = await freshDatabase();
await db.query('CREATE TABLE busy_effects (job_id bigint, worker text)');
const workers: Worker[] = [];
const pools: Db[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(0)));
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

const lockWaits = async () =>
  (await db.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n as number;

/**
 * Worker "frozen" takes the job and stalls inside its effect's transaction
 * (effect written, not committed) past its 300 ms lease; worker "retry" then
 * claims the job. Returns what "retry" did first, and a release for "frozen".
 */
async function retryBehindFrozenEffect(queue: string) {
  const job = await enqueue(db, queue, {});
  const events = new Events();
  const frozen = { open: false };
  const retryStarted = events.waitFor('job:started', (e) => e.workerId === 'retry');
  const frozenInEffect = events.waitFor('job:started', (e) => e.workerId === 'frozen');
  const start = (workerId: string, leaseMs: number, handler: Handler) => {
    const pool = new Db({ connectionString: url, maxConnections: 4 });
    pools.push(pool);
    const w = new Worker({ db: pool, handlers: { [queue]: handler }, concurrency: 1, leaseMs, heartbeatMs: 0, pollMs: 20, rescueIntervalMs: 50, livenessMs: 100, events, workerId, rng: new SeededRng(1) });
    workers.push(w);
    w.start();
  };
  const effect = (workerId: string, hold: () => Promise<unknown>): Handler => async (_p, ctx) => {
    await ctx.effectOnce(async (tx) => {
      await tx.query('INSERT INTO busy_effects VALUES ($1, $2)', [ctx.job.id, workerId]);
      await hold();
    });
  };
  start('frozen', 300, effect('frozen', () => until('unfrozen', () => frozen.open, 30_000, 20)));
  await frozenInEffect;
  start('retry', 60_000, effect('retry', async () => {}));
  await retryStarted;
  return { job, events, unfreeze: () => (frozen.open = true) };
}

describe('a retry behind a frozen worker\'s open effect', () => {
  it('does not wait on its lock: the claim is handed back uncharged, and the job completes once, after the freeze', async () => {
    const { job, events, unfreeze } = await retryBehindFrozenEffect('busy');
    const deferred: EngineEvents['job:deferred'] = await events.waitFor('job:deferred', (e) => e.jobId === job.id && e.workerId === 'retry');
    expect(deferred.retryAt).toBeGreaterThan(0);
    const row = await jobRow(db, job.id);
    expect(row.state === 'pending' || row.state === 'claimed').toBe(true); // claimed: retried again already
    expect(row.crash_count).toBe(0);
    expect(await lockWaits()).toBe(0);
    const done = events.waitFor('job:completed', (e) => e.jobId === job.id);
    unfreeze();
    // The frozen holder is fenced out and rolls its effect back; the next claim (by either worker, the
    // unfrozen one is free again) applies it once.
    const completed = await done;
    expect(completed.attempt).toBeGreaterThan(1);
    expect((await db.query('SELECT worker FROM busy_effects WHERE job_id = $1', [job.id])).rows).toEqual([{ worker: completed.workerId }]);
    expect(await jobRow(db, job.id)).toMatchObject({ state: 'done', crash_count: 0 });
  });

  it('negative control: the effect-lock-wait mutant queues behind the lock while holding its claim', async () => {
    useMutant('effect-lock-wait');
    const { job, events, unfreeze } = await retryBehindFrozenEffect('busy-mutant');
    const deferrals: number[] = [];
    events.on('job:deferred', (e) => deferrals.push(e.jobId));
    await until('a lock wait', async () => (await lockWaits()) > 0);
    expect(await jobRow(db, job.id)).toMatchObject({ state: 'claimed' }); // held by "retry" while it waits
    expect(deferrals).toEqual([]);
    const done = events.waitFor('job:completed', (e) => e.jobId === job.id);
    unfreeze();
    await done;
  });
});
