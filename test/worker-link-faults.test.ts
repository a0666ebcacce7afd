// What a worker does when its link to Postgres fails or the database refuses
// writes (docs/network-faults.md), against real Postgres through the
// harness's link proxy:
//  - cut off (every byte to the server held, connections open), it aborts its
//    handler once no renewal landed for a whole lease, no later than the lease
//    ends on the database's clock (lease:lost, phase expired), and once healed
//    hands the claim back uncharged (job:deferred);
//  - an effect whose transaction the database refuses (25006
//    read_only_sql_transaction) is handed back uncharged, not failed, and
//    counted as a database error of that kind.
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock.ts';
import { Db } from '../engine/db.ts';
import { enqueue } from '../engine/enqueue.ts';
import type { EngineEvents } from '../engine/events.ts';
import { SeededRng } from '../engine/rng.ts';
import { Worker } from '../engine/worker/worker.ts';
import { classifyStatement } from '../harness/faults/commit-points.ts';
import { LinkProxy } from '../harness/faults/proxy.ts';
import { freshDatabase } from './support/db.ts';
import { jobRow } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { db, url } = await freshDatabase();
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe('a worker whose database is out of reach', () => {
  it('aborts its handler once no renewal landed for a whole lease, before the lease ends on the database clock', async () => {
    const u = new URL(url);
    const proxy = new LinkProxy({ name: 'w', upstream: { host: u.hostname, port: Number(u.port) }, clock: systemClock, rng: new SeededRng(1), classify: classifyStatement });
    await proxy.listen();
    const pool = new Db({ connectionString: proxy.urlThrough(url), maxConnections: 6 });
    pool.pool.on('connect', (c) => c.on('error', () => {}));
    const aborted: unknown[] = [];
    let started = 0;
    const w = new Worker({
      db: pool,
      handlers: {
        // Inside its effect's transaction when the link goes: the transaction's fence decides, not the clock.
        effect: async (_p, ctx) => {
          started++;
          await ctx.effectOnce(() => systemClock.sleep(8_000)).catch(() => {});
        },
        held: async (_p, ctx) => {
          started++;
          await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
          aborted.push(ctx.signal.reason);
        },
      },
      leaseMs: 1_500,
      heartbeatMs: 300,
      pollMs: 50,
      rescue: false,
      workerId: 'cut-off',
      rng: new SeededRng(2),
    });
    const renewedTo: number[] = [];
    const lost: { e: EngineEvents['lease:lost']; at: number }[] = [];
    w.events.on('lease:renewed', (e) => renewedTo.push(e.dbLeaseExpiresAt));
    w.events.on('lease:lost', (e) => lost.push({ e, at: systemClock.now() }));
    cleanups.push(async () => {
      proxy.setShape(['toServer', 'toClient'], { held: false });
      await w.stop(0);
      await pool.close().catch(() => {});
      await proxy.close();
    });
    w.start();
    const job = await enqueue(db, 'held', {});
    await until('the first handler to start and a renewal to land', () => started === 1 && renewedTo.length > 0);
    // Two more, a moment later: their leases end at other times, and each must be aborted at its own.
    await systemClock.sleep(200);
    await enqueue(db, 'held', {});
    await enqueue(db, 'effect', {});
    await enqueue(db, 'held', {});
    await until('four handlers running', () => started === 4);
    proxy.setShape(['toServer', 'toClient'], { held: true }); // the partition: nothing reaches the server or comes back, nothing fails
    await until('every handler to be aborted', () => lost.length === 3, 10_000);
    expect(lost.map((l) => l.e.jobId)).toContain(job.id);
    expect(lost.map((l) => l.e.phase)).toEqual(['expired', 'expired', 'expired']);
    expect(aborted.every((a) => a instanceof Error)).toBe(true);
    // Each abort came before the lease's end as the database last wrote it (same host: one wall clock).
    for (const l of lost) {
      const row = (await db.query("SELECT state::text, lease_expires_at FROM stampede.jobs WHERE id = $1", [l.e.jobId])).rows[0];
      expect(row.state).toBe('claimed');
      expect(l.at).toBeLessThan((row.lease_expires_at as Date).getTime());
    }
    // Healed: the claim it gave up goes back uncharged, due at once (nobody took it over meanwhile: no rescuer runs).
    const deferred: EngineEvents['job:deferred'][] = [];
    w.events.on('job:deferred', (e) => deferred.push(e));
    proxy.setShape(['toServer', 'toClient'], { held: false });
    await until('the expired claims to be handed back', () => deferred.length === 3, 10_000);
    expect(deferred.map((d) => d.jobId)).toContain(job.id);
    expect((await jobRow(db, job.id)).errors).toEqual([]);
  });

  it('hands back uncharged an effect the database refused as read-only, and counts the error by kind', async () => {
    const pool = new Db({ connectionString: url, maxConnections: 4 });
    await db.query('CREATE TABLE IF NOT EXISTS ro_effects (key text PRIMARY KEY)');
    let tries = 0;
    const w = new Worker({
      db: pool,
      handlers: {
        ro: async (_p, ctx) => {
          tries++;
          await ctx.effectOnce(async (tx) => {
            // The first try meets a read-only primary: a real 25006 from Postgres, inside the effect's transaction.
            if (tries === 1) await tx.query('SET TRANSACTION READ ONLY');
            await tx.query('INSERT INTO ro_effects (key) VALUES ($1)', [`job:${ctx.job.id}`]);
          });
        },
      },
      pollMs: 50,
      workerId: 'read-only',
      rng: new SeededRng(3),
    });
    const dbErrors: EngineEvents['db:error'][] = [];
    const deferred: EngineEvents['job:deferred'][] = [];
    w.events.on('db:error', (e) => dbErrors.push(e));
    w.events.on('job:deferred', (e) => deferred.push(e));
    cleanups.push(async () => {
      await w.stop(0);
      await pool.close();
    });
    w.start();
    const job = await enqueue(db, 'ro', {});
    await until('the job to be done', async () => (await jobRow(db, job.id)).state === 'done', 15_000);
    expect(dbErrors[0]).toMatchObject({ kind: 'read_only', sqlstate: '25006', where: 'effect' });
    expect(deferred[0]).toMatchObject({ jobId: job.id, reason: 'database unavailable (read_only)' });
    const row = await jobRow(db, job.id);
    // Handed back with its attempt refunded: the successful run was its first charged attempt, and no error was recorded.
    expect(row.attempts).toBe(1);
    expect(row.errors).toEqual([]);
    expect((await db.query('SELECT count(*)::int AS n FROM ro_effects')).rows[0].n).toBe(1);
  });
});
