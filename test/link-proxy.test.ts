// The harness's link proxy (harness/faults/proxy.ts) against real Postgres:
// it forwards the protocol untouched, holds a partitioned direction with the
// connection open, delays and resets, and cuts the answer of a committed
// enqueue, claim, completion or effect transaction after the server
// committed it, naming what it cut.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock.ts';
import { Db } from '../engine/db.ts';
import { enqueue } from '../engine/enqueue.ts';
import { SeededRng } from '../engine/rng.ts';
import { claimJobs } from '../engine/worker/claim.ts';
import { effectInTransaction } from '../engine/worker/effect-once.ts';
import { workerQueries } from '../engine/worker/queries.ts';
import { prepared } from '../engine/db.ts';
import { classifyStatement } from '../harness/faults/commit-points.ts';
import { LinkProxy } from '../harness/faults/proxy.ts';
import { freshDatabase } from './support/db.ts';
import { jobRow } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { db, url } = await freshDatabase();
const proxies: LinkProxy[] = [];
const pools: Db[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close().catch(() => {})));
  await Promise.all(proxies.map((p) => p.close()));
});

async function proxied(name = 'p'): Promise<{ proxy: LinkProxy; through: Db }> {
  const u = new URL(url);
  const proxy = new LinkProxy({ name, upstream: { host: u.hostname, port: Number(u.port) }, clock: systemClock, rng: new SeededRng(1), classify: classifyStatement });
  await proxy.listen();
  proxies.push(proxy);
  const through = new Db({ connectionString: proxy.urlThrough(url), maxConnections: 2 });
  through.pool.on('connect', (c) => c.on('error', () => {}));
  pools.push(through);
  return { proxy, through };
}

const claimBase = { queues: ['q'], leaseMs: [30_000], workerId: 'w-proxy', limit: 5, agingMs: 60_000 };

describe('the link proxy', () => {
  it('forwards queries unchanged, prepared statements included', async () => {
    const { proxy, through } = await proxied();
    expect((await through.query('SELECT $1::int + 1 AS n', [41])).rows[0].n).toBe(42);
    expect((await through.query(prepared('SELECT $1::text AS s', ['x']))).rows[0].s).toBe('x');
    expect(proxy.stats.connections).toBeGreaterThan(0);
  });

  it('holds a partitioned direction with the connection open, and delivers on heal', async () => {
    const { proxy, through } = await proxied();
    await through.query('SELECT 1'); // connected before the partition
    proxy.setShape(['toServer'], { held: true });
    let answered = false;
    const q = through.query('SELECT 2 AS n').then((r) => ((answered = true), r.rows[0].n));
    await until('the query to be held', () => proxy.queued().toServer > 0);
    await systemClock.sleep(200);
    expect(answered).toBe(false);
    expect(proxy.open).toBeGreaterThan(0);
    proxy.setShape(['toServer'], { held: false });
    expect(await q).toBe(2);
  });

  it('holds the answers only, one way: the server runs what it is sent', async () => {
    const { proxy, through } = await proxied();
    await through.query('SELECT 1');
    proxy.setShape(['toClient'], { held: true });
    const q = through.query("SELECT pg_sleep(0), 'done' AS s");
    await until('the answer to be held', () => proxy.queued().toClient > 0);
    proxy.setShape(['toClient'], { held: false });
    expect((await q).rows[0].s).toBe('done');
  });

  it('delays each direction by the latency it was given', async () => {
    const { proxy, through } = await proxied();
    await through.query('SELECT 1');
    proxy.setShape(['toServer', 'toClient'], { latencyMs: 100, jitterMs: 20 });
    const t0 = systemClock.now();
    await through.query('SELECT 1');
    expect(systemClock.now() - t0).toBeGreaterThanOrEqual(150); // two legs of at least 80 ms each
    proxy.setShape(['toServer', 'toClient'], { latencyMs: 0, jitterMs: 0 });
  });

  it('resets every connection', async () => {
    const { proxy, through } = await proxied();
    await through.query('SELECT 1');
    proxy.setShape(['toClient'], { held: true });
    const q = through.query('SELECT 1').catch((e: Error) => e);
    await until('the answer to be held', () => proxy.queued().toClient > 0);
    expect(proxy.reset()).toBeGreaterThan(0);
    expect(await q).toBeInstanceOf(Error);
    proxy.setShape(['toClient'], { held: false });
    expect((await through.query('SELECT 3 AS n')).rows[0].n).toBe(3); // a new connection
  });

  it('cuts a committed enqueue: the row exists, the producer heard nothing, a re-send by key finds it', async () => {
    const { proxy, through } = await proxied();
    const { cut } = proxy.armCommitCut('enqueue');
    const err = await enqueue(through, 'q', { n: 1 }, { idempotencyKey: 'cut-1' }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    const c = (await cut)!;
    expect(c).toMatchObject({ point: 'enqueue', statement: 'EnqueueOne' });
    expect(c.params).toContain('cut-1');
    const row = (await db.query("SELECT id FROM stampede.jobs WHERE idempotency_key = 'cut-1'")).rows[0];
    expect(row).toBeDefined();
    expect((await enqueue(through, 'q', { n: 1 }, { idempotencyKey: 'cut-1' })).id).toBe(row.id);
  });

  it("runs an armed start on a claim's Bind before forwarding it: a partition it starts holds that very claim, and other statements pass before it", async () => {
    const job = await enqueue(db, 'q-on-claim', { n: 1 });
    const { proxy, through } = await proxied();
    let started = 0;
    proxy.armOnStatement('claim', () => {
      started++;
      proxy.setShape(['toServer'], { held: true });
    });
    // Not a claim: passes, and the start waits.
    expect((await through.query('SELECT 3 AS n')).rows[0].n).toBe(3);
    expect(started).toBe(0);
    let answered = false;
    const claim = claimJobs(through, { ...claimBase, queues: ['q-on-claim'] }).then((jobs) => ((answered = true), jobs));
    await until('the claim to be held', () => proxy.queued().toServer > 0);
    expect(started).toBe(1);
    await systemClock.sleep(200);
    // Held before the server saw it: the job is still pending, the claim unanswered.
    expect(answered).toBe(false);
    expect((await jobRow(db, job.id)).state).toBe('pending');
    proxy.setShape(['toServer'], { held: false });
    expect((await claim).map((j) => j.id)).toEqual([job.id]);
    // Once: the next claim passes.
    expect(await claimJobs(through, { ...claimBase, queues: ['q-on-claim'] })).toEqual([]);
    expect(started).toBe(1);
  });

  it('cuts a committed claim and names the jobs it took', async () => {
    await enqueue(db, 'q', { n: 2 });
    const { proxy, through } = await proxied();
    const { cut } = proxy.armCommitCut('claim');
    expect(await claimJobs(through, claimBase).catch((e: Error) => e)).toBeInstanceOf(Error);
    const c = (await cut)!;
    expect(c.statement).toBe('ClaimJobs');
    expect(c.rowIds.length).toBeGreaterThan(0);
    for (const id of c.rowIds) expect((await jobRow(db, Number(id))).state).toBe('claimed');
  });

  it('cuts a committed completion and an effect transaction', async () => {
    await enqueue(db, 'q', { n: 3 });
    await enqueue(db, 'q', { n: 4 });
    const jobs = await claimJobs(db, { ...claimBase, limit: 2 });
    expect(jobs.length).toBe(2);
    const { proxy, through } = await proxied();
    const complete = proxy.armCommitCut('complete');
    const done = through.query(prepared(workerQueries.CompleteJobs, [`${jobs[0].id}`, jobs[0].leaseToken]));
    expect(await done.catch((e: Error) => e)).toBeInstanceOf(Error);
    expect((await complete.cut)!.params[0]).toBe(String(jobs[0].id));
    expect((await jobRow(db, jobs[0].id)).state).toBe('done');

    const effect = proxy.armCommitCut('effect');
    const res = await effectInTransaction(through, jobs[1], `k-${jobs[1].id}`, async () => 'x').catch((e: Error) => e);
    expect(res).toBeInstanceOf(Error);
    const c = (await effect.cut)!;
    expect(c.tags.at(-1)).toBe('COMMIT');
    expect(c.params).toContain(`k-${jobs[1].id}`);
    expect((await jobRow(db, jobs[1].id)).state).toBe('done');
  });

  it('passes a connection that committed nothing of the armed point', async () => {
    const { proxy, through } = await proxied();
    const { cut, disarm } = proxy.armCommitCut('complete');
    expect((await through.query('SELECT 5 AS n')).rows[0].n).toBe(5);
    disarm();
    expect(await cut).toBeNull();
  });
});

// A plain pg.Client through the proxy, for the record: the startup phase (untyped messages) frames too.
describe('the startup phase', () => {
  it('frames a fresh client', async () => {
    const { proxy } = await proxied();
    const c = new pg.Client({ connectionString: proxy.urlThrough(url) });
    await c.connect();
    expect((await c.query('SELECT 7 AS n')).rows[0].n).toBe(7);
    await c.end();
  });
});
