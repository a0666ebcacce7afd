// Issue 13, item 4: Postgres killed (SIGKILL of the postmaster) twice under
// load, each time down for longer than the jobs' leases. Healthy jobs whose
// heartbeats and result writes failed on the lost connection must not be
// charged worker crashes (no worker died), so none is dead-lettered as a
// poison pill however many outages catch it. Before worker liveness, every
// lease that expired in the outage was charged a crash, and a job caught by
// both outages died with "crashed its worker 2 times".
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock.ts';
import { Db } from '../engine/db.ts';
import { enqueueMany } from '../engine/enqueue.ts';
import { createLogger } from '../engine/log.ts';
import { migrate } from '../engine/migrator.ts';
import { SeededRng } from '../engine/rng.ts';
import { claimJobs } from '../engine/worker/claim.ts';
import { livenessQueries } from '../engine/worker/queries.ts';
import { LeaseRescuer } from '../engine/worker/rescuer.ts';
import { Worker } from '../engine/worker/worker.ts';
import { applyMutant } from '../harness/mutants/index.ts';
import { createDatabase } from '../harness/postgres/databases.ts';
import { EmbeddedPostgres } from '../harness/postgres/embedded.ts';
import { countByState, jobRow } from './support/jobs.ts';
import { until } from './support/wait.ts';

const LEASE_MS = 1_000;
/** Each outage outlasts every lease in flight, so all of them expire on the database clock. */
const OUTAGE_MS = 2_500;

const server = new EmbeddedPostgres({ log: createLogger('test', 'warn') });
let db: Db | undefined;
const workers: Worker[] = [];
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop(0)));
  await db?.close();
  await server.stop();
});

describe('a Postgres crash under load', () => {
  it('charges no healthy job a crash, across two outages longer than the lease', async () => {
    await server.start();
    const url = await createDatabase(server.adminUrl, 'crashes');
    db = new Db({ connectionString: url, maxConnections: 4 });
    await migrate(db);
    await db.query('CREATE TABLE effects (key text PRIMARY KEY)');
    const jobs = 1_200;
    await enqueueMany(db, [
      ...Array.from({ length: jobs / 2 }, (_, i) => ({ queue: 'plain', payload: { i } })),
      ...Array.from({ length: jobs / 2 }, (_, i) => ({ queue: 'effect', payload: { i } })),
    ]);
    let completed = 0;
    let rescuedAlive = 0;
    let rescuedDead = 0;
    for (let i = 0; i < 2; i++) {
      const pool = new Db({ connectionString: url, maxConnections: 12 });
      const w = new Worker({
        db: pool,
        handlers: {
          plain: () => systemClock.sleep(60),
          effect: async (_p, ctx) => {
            await systemClock.sleep(30);
            await ctx.effectOnce((tx) => tx.query('INSERT INTO effects (key) VALUES ($1)', [`job:${ctx.job.id}`]));
          },
        },
        concurrency: 8,
        pollMs: 50,
        leaseMs: LEASE_MS,
        heartbeatMs: 300,
        livenessMs: 200,
        rescueIntervalMs: 100,
        maxCrashes: 2,
        workerId: `crash-w${i}`,
        rng: new SeededRng(i),
      });
      w.events.on('job:completed', () => completed++);
      w.events.on('lease:rescued', (e) => (e.crashed ? rescuedDead++ : rescuedAlive++));
      workers.push(w);
      w.start();
      const stop = w.stop.bind(w);
      w.stop = async (g) => {
        await stop(g);
        await pool.close();
      };
    }
    const inFlightAtCrash: number[] = [];
    for (const after of [150, 450]) {
      await until(`${after} done`, () => completed >= after, 60_000);
      inFlightAtCrash.push(workers.reduce((n, w) => n + w.activeJobs, 0));
      await server.crash();
      // The outage itself: the fault's duration, not a wait for a condition.
      await systemClock.sleep(OUTAGE_MS);
      await server.restart();
    }
    await until('every job done or dead', () => countByState(db!, 'plain').then(async (p) => {
      const e = await countByState(db!, 'effect');
      return (p.done ?? 0) + (p.dead ?? 0) + (e.done ?? 0) + (e.dead ?? 0) === jobs;
    }, () => false), 120_000, 200);

    const crashed = (await db.query('SELECT id, crash_count, errors FROM stampede.jobs WHERE crash_count > 0')).rows;
    const dead = (await db.query('SELECT job_id, reason FROM stampede.dead_letters')).rows;
    console.log('db crash:', { inFlightAtCrash, rescuedAlive, rescuedDead, crashed: crashed.length, dead: dead.length });
    // The outages really caught jobs in flight, with leases that expired while the database was down.
    expect(inFlightAtCrash.every((n) => n > 0)).toBe(true);
    expect(crashed).toEqual([]);
    expect(dead).toEqual([]);
    expect(rescuedDead).toBe(0);
    // Exactly one effect per effect job, through both outages.
    expect((await db.query('SELECT count(*)::int AS n FROM effects')).rows[0].n).toBe(jobs / 2);
    await Promise.all(workers.splice(0).map((w) => w.stop(0)));
  });

  it('a failure whose write meets a dead server is written once the server is back: a recorded failure, not a crash', async () => {
    const pg = db!;
    await enqueueMany(pg, [{ queue: 'fails-in-outage', payload: {} }]);
    const pool = new Db({ connectionString: pg.options.connectionString, maxConnections: 4 });
    const w = new Worker({
      db: pool,
      handlers: {
        // The database dies while the handler runs; the handler then fails, so the failure write meets the outage. Only
        // the first attempt: the retry's jittered backoff may come due before the test ends on a slow machine, and a
        // second crash would leave the server down for the next test.
        'fails-in-outage': async (_p, ctx) => {
          if (ctx.attempt === 1) await server.crash();
          throw new Error('dependency down');
        },
      },
      leaseMs: LEASE_MS,
      heartbeatMs: 0,
      pollMs: 50,
      backoffBaseMs: 60_000,
      // No rescuer: the lease runs out in the outage, and a rescue pass after the restart may take the job back (lease
      // lost, as the lease allows) before the write's next retry. The write alone is under test here; the first test has
      // rescuers through outages.
      rescue: false,
      workerId: 'fail-writer',
      rng: new SeededRng(5),
    });
    const failed = w.events.waitFor('job:failed', () => true);
    w.start();
    try {
      await until('the server down', () => pg.query('SELECT 1').then(() => false, () => true));
      await systemClock.sleep(OUTAGE_MS); // the outage: longer than the lease
      await server.restart();
      // Bounded, so a worker that gave up on the write fails here and not on the file's timeout.
      const recorded = "SELECT state = 'failed' AS ok FROM stampede.jobs WHERE queue = 'fails-in-outage'";
      await until('the failure recorded', () => pg.query(recorded).then((r) => r.rows[0]?.ok, () => false), 30_000, 100);
      const e = await failed;
      expect(e.error).toBe('Error: dependency down');
      const row = (await pg.query('SELECT state, attempts, crash_count, errors FROM stampede.jobs WHERE id = $1', [e.jobId])).rows[0];
      // The first attempt's failure is in the history as a failure, not as a crash. (Its retry may have run by now: full
      // jitter can make it due at once.)
      expect(row.crash_count).toBe(0);
      expect(row.errors[0]).toMatchObject({ attempt: 1, kind: 'error', error: 'Error: dependency down' });
      expect(row.errors.map((x: { kind: string }) => x.kind)).toEqual(row.errors.map(() => 'error'));
    } finally {
      await w.stop(0);
      await pool.close();
    }
  });

  it('right after a restart, a lease holder silent through the outage is not yet convicted; the mutant convicts it', async () => {
    const pg = db!;
    await enqueueMany(pg, [{ queue: 'held', payload: {} }]);
    // As a worker does: it announces itself, then claims.
    await pg.query(livenessQueries.StartWorker, ['held-w', 300]);
    const [job] = await claimJobs(pg, { queues: ['held'], leaseMs: [LEASE_MS], limit: 1, workerId: 'held-w', agingMs: 5_000 });
    await server.crash();
    await systemClock.sleep(OUTAGE_MS); // the outage: longer than the lease and the holder's liveness ttl
    await server.restart();
    await until('server back', () => pg.query('SELECT 1').then(() => true, () => false));
    const state = await pg.query(
      "SELECT j.lease_expires_at < now() AS lease_expired, w.expires_at < now() AS silent FROM stampede.jobs j JOIN stampede.workers w ON w.worker_id = j.lease_owner WHERE j.id = $1",
      [job.id],
    );
    expect(state.rows[0]).toEqual({ lease_expired: true, silent: true });
    // Within the restart grace (10 s by default) silence proves nothing: the holder may be reconnecting.
    expect(await new LeaseRescuer({ db: pg }).runOnce()).toBe(0);
    expect(await jobRow(pg, job.id)).toMatchObject({ state: 'claimed', crash_count: 0 });
    const undo = applyMutant('crash-on-any-expiry');
    try {
      expect(await new LeaseRescuer({ db: pg }).runOnce()).toBe(1);
    } finally {
      undo();
    }
    expect(await jobRow(pg, job.id)).toMatchObject({ crash_count: 1 });
  });
});
