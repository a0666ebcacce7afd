// Failover to a streaming replica (docs/failover.md), against real Postgres:
// the harness's standby of an embedded server, promoted after the primary is
// killed, reached through the harness's proxy as users reach theirs through
// pgbouncer, haproxy or a virtual IP.
//  1. A worker follows the proxy to the promoted synchronous standby: its
//     connections fail, it retries, and no job is charged an attempt.
//  2. Asynchronous: the checker's count of lost acknowledged enqueues equals
//     an independent SQL count of the acknowledged ids missing on the
//     promoted primary, and is above zero.
import { afterEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { systemClock } from '../engine/clock.ts';
import { Db } from '../engine/db.ts';
import { enqueue } from '../engine/enqueue.ts';
import { createLogger } from '../engine/log.ts';
import { migrate } from '../engine/migrator.ts';
import { SeededRng } from '../engine/rng.ts';
import { Worker } from '../engine/worker/worker.ts';
import { failoverFacts, lostEnqueueCount, lostWrites } from '../harness/checkers/failover.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { createDatabase } from '../harness/postgres/databases.ts';
import { EmbeddedPostgres } from '../harness/postgres/embedded.ts';
import { Replica, type ReplicationMode } from '../harness/postgres/replica.ts';
import { readFinalState } from '../harness/runner/final-state.ts';
import { harnessQueries } from '../harness/runner/queries.ts';
import { until } from './support/wait.ts';

const log = createLogger('test', 'warn');
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

/** A primary, its standby in `mode`, a database made through the VIP, and a pool on it. */
async function rig(mode: ReplicationMode) {
  const primary = new EmbeddedPostgres({ log });
  cleanups.push(() => primary.stop());
  await primary.start();
  const replica = await Replica.start(primary, { mode, clock: systemClock, rng: new SeededRng(7), log });
  cleanups.push(() => replica.stop());
  const direct = await createDatabase(primary.adminUrl, 'failover');
  const url = replica.vip.urlThrough(direct);
  const db = new Db({ connectionString: url, maxConnections: 8 });
  db.pool.on('connect', (c) => c.on('error', () => {}));
  cleanups.push(() => db.close());
  await migrate(db);
  return { primary, replica, db, url };
}

/** The fault's steps, as the failover injector takes them; returns the facts the checkers read, in epoch ms. */
async function failOver(replica: Replica) {
  replica.link.setShape(['toServer', 'toClient'], { held: true });
  const heldT = systemClock.now();
  // The hold itself is the fault's length (the standby falls behind), not a wait for a condition.
  await systemClock.sleep(1_000);
  const atKill = await replica.state();
  await replica.primary.crash();
  const killT = systemClock.now();
  replica.link.reset();
  const position = await replica.standbyPosition(atKill.primaryLsn);
  await replica.promote();
  replica.repointVip();
  const promotedT = systemClock.now();
  return { heldT, killT, promotedT, atKill, position };
}

describe('failover to a streaming replica', () => {
  it('a worker follows the proxy to the promoted synchronous standby, charging no job an attempt', async () => {
    const { replica, db, url } = await rig('sync');
    const pool = new Db({ connectionString: url, maxConnections: 10 });
    pool.pool.on('connect', (c) => c.on('error', () => {}));
    const dbErrors: string[] = [];
    let completed = 0;
    const worker = new Worker({
      db: pool,
      handlers: { slow: () => systemClock.sleep(150) },
      concurrency: 8,
      pollMs: 50,
      // No job is charged while its lease outlasts the failover (docs/failover.md); on a busy machine a promotion
      // has taken seconds, so the lease is long enough that the test judges the failover, not the machine's load.
      leaseMs: 30_000,
      heartbeatMs: 1_000,
      rescueIntervalMs: 200,
      workerId: 'failover-w0',
      rng: new SeededRng(1),
    });
    worker.events.on('db:error', (e) => dbErrors.push(`${e.where}:${e.kind}`));
    worker.events.on('job:completed', () => completed++);
    cleanups.push(async () => {
      await worker.stop(0);
      await pool.close();
    });
    const jobs = 120;
    for (let i = 0; i < jobs; i++) await enqueue(db, 'slow', { i });
    worker.start();
    await until('40 done', () => completed >= 40, 60_000);
    const inFlight = worker.activeJobs;
    await failOver(replica);
    await until('every job done on the promoted standby', async () => (await db.query("SELECT count(*)::int AS n FROM stampede.jobs WHERE state = 'done'").catch(() => ({ rows: [{ n: 0 }] }))).rows[0].n === jobs, 90_000, 200);
    const rows = (await db.query('SELECT id, attempts, crash_count, jsonb_array_length(errors) AS errors FROM stampede.jobs')).rows;
    // The failover caught jobs in flight, and the worker met it (its statements failed), yet no job paid for it.
    expect(inFlight).toBeGreaterThan(0);
    expect(dbErrors.length).toBeGreaterThan(0);
    expect(rows.filter((r) => r.attempts !== 1 || r.crash_count !== 0 || r.errors !== 0)).toEqual([]);
    expect((await db.query('SELECT pg_is_in_recovery() AS r')).rows[0].r).toBe(false);
  });

  it('async: the lost acknowledged enqueues the checker lists equal an independent SQL count on the promoted primary', async () => {
    const { replica, db } = await rig('async');
    await db.query(harnessQueries.CreateHarnessTables);
    const history: HistoryEvent[] = [];
    let op = 0;
    const produce = async (n: number) => {
      for (let i = 0; i < n; i++, op++) {
        const j = await enqueue(db, 'q', { kind: 'normal', op });
        history.push({ t: systemClock.now(), node: 'load', type: 'enqueue:ok', op, jobId: j.id, queue: 'q', runAt: j.runAt.getTime(), intendedAt: 0, sentAt: 0 });
      }
    };
    await produce(30);
    const fault = failOver(replica);
    // Acknowledged by the primary while the standby hears nothing: these are what an asynchronous failover loses.
    await until('the replication link held', () => replica.link.shapes.toClient.held);
    await produce(25);
    const f = await fault;
    await produce(25);
    history.push(
      { t: f.heldT, node: 'nemesis', type: 'fault:injected', fault: 'failover', detail: { seq: 0, replication: 'async' } },
      { t: f.promotedT, node: 'nemesis', type: 'fault:injected', fault: 'failover', detail: { seq: 0, phase: 'end', promoted: true } },
      {
        t: f.promotedT, node: 'nemesis', type: 'fault:evidence', fault: 'failover',
        detail: { seq: 0, replication: 'async', syncState: f.atKill.syncState, killT: f.killT, promotedT: f.promotedT, oldPrimaryGone: true, oldPortRefuses: true, lastReplayedCommitT: f.position.lastReplayedCommitMs },
      },
    );
    history.sort((a, b) => a.t - b.t);
    const final = await readFinalState(db);
    const facts = failoverFacts(history)!;
    const { lost } = lostWrites(history, final, facts);
    const listed = lostEnqueueCount(lost);

    // The independent count: straight to the promoted server, not through the proxy, by SQL alone.
    const u = new URL(replica.standby.adminUrl);
    u.pathname = '/failover';
    const c = new pg.Client({ connectionString: u.toString() });
    await c.connect();
    const acked = history.filter((e) => e.type === 'enqueue:ok');
    const sql = (
      await c.query(
        `SELECT count(*)::int AS n FROM unnest($1::bigint[], $2::int[]) AS a(id, op)
          WHERE NOT EXISTS (SELECT 1 FROM stampede.jobs j WHERE j.id = a.id AND (j.payload->>'op')::int = a.op)`,
        [acked.map((e) => e.jobId), acked.map((e) => e.op)],
      )
    ).rows[0].n;
    await c.end();
    expect(listed).toBeGreaterThan(0);
    expect(listed).toBe(sql);
    // Each lost enqueue was acknowledged after the standby's last replayed commit, and before the promotion.
    expect(lost.every((l) => l.inLagWindow)).toBe(true);
  });
});
