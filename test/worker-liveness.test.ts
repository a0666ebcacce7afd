// Worker liveness and the crash charge: an expired lease is a crash of its
// job only when the holder is dead by its own liveness row; a live holder
// that lost its lease (a stall with heartbeats off, a database outage) has the
// job taken back without one. Real Postgres; the crash-on-any-expiry mutant
// is the negative control.
import { afterEach, describe, expect, it } from 'vitest';
import { enqueue } from '../engine/enqueue.ts';
import { systemClock } from '../engine/clock.ts';
import { Events, type EngineEvents } from '../engine/events.ts';
import { createLogger } from '../engine/log.ts';
import { SeededRng } from '../engine/rng.ts';
import { claimJobs } from '../engine/worker/claim.ts';
import { livenessQueries } from '../engine/worker/queries.ts';
import { WorkerLiveness } from '../engine/worker/liveness.ts';
import { LeaseRescuer } from '../engine/worker/rescuer.ts';
import { Worker } from '../engine/worker/worker.ts';
import type { WorkerOptions } from '../engine/worker/options.ts';
import { freshDatabase } from './support/db.ts';
import { jobRow } from './support/jobs.ts';
import { useMutant } from './support/mutant.ts';
import { until } from './support/wait.ts';

const { db } = await freshDatabase();
const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(0)));
});

function startWorker(options: Omit<WorkerOptions, 'db'>): Worker {
  const w = new Worker({ db, rng: new SeededRng(11), pollMs: 20, rescueIntervalMs: 50, livenessMs: 100, ...options });
  workers.push(w);
  w.start();
  return w;
}

/** A job claimed by `owner` whose lease has already expired (a 1 ms lease, then the database's clock moves on). */
async function expiredClaim(queue: string, owner: string): Promise<number> {
  const job = await enqueue(db, queue, {});
  await claimJobs(db, { queues: [queue], leaseMs: [1], limit: 1, workerId: owner, agingMs: 5_000 });
  await until('lease expired', async () => (await db.query('SELECT lease_expires_at < now() AS x FROM stampede.jobs WHERE id = $1', [job.id])).rows[0].x);
  return job.id;
}

async function setLiveness(owner: string, lastSeen: string, expires: string): Promise<void> {
  await db.query(
    `INSERT INTO stampede.workers (worker_id, started_at, last_seen_at, expires_at, ttl_ms) VALUES ($1, now() - interval '1 hour', now() + $2::interval, now() + $3::interval, 300)
     ON CONFLICT (worker_id) DO UPDATE SET last_seen_at = excluded.last_seen_at, expires_at = excluded.expires_at`,
    [owner, lastSeen, expires],
  );
}

const rescueOnce = (restartGraceMs = 0) => new LeaseRescuer({ db, restartGraceMs }).runOnce();

describe('the rescuer tells a dead lease holder from a live one', () => {
  it('a holder with no liveness row (stopped, or never said it was alive) is dead: its expired lease is a crash', async () => {
    const id = await expiredClaim('live-none', 'ghost');
    expect(await rescueOnce()).toBe(1);
    const row = await jobRow(db, id);
    expect(row).toMatchObject({ state: 'failed', crash_count: 1 });
    expect(row.errors.at(-1)).toMatchObject({ kind: 'lease-expired' });
  });

  it('a holder silent past its liveness expiry is suspected first, and dead once it stays silent two more liveness periods: a crash', async () => {
    const id = await expiredClaim('live-silent', 'silent');
    await setLiveness('silent', '-10 seconds', '-5 seconds');
    // The first pass only suspects it: an expired row may be a step of the database clock, not a death.
    expect(await rescueOnce()).toBe(0);
    expect(await jobRow(db, id)).toMatchObject({ state: 'claimed', crash_count: 0 });
    await until('convicted after its ttl of silence since the suspicion', async () => (await rescueOnce()) === 1);
    expect(await jobRow(db, id)).toMatchObject({ crash_count: 1 });
  });

  it('a holder whose row expired at once (a step of the database clock) and that renews before its ttl is alive: no crash', async () => {
    const id = await expiredClaim('live-stepped', 'stepped');
    await setLiveness('stepped', '-10 seconds', '-5 seconds');
    expect(await rescueOnce()).toBe(0); // suspected
    await db.query(livenessQueries.TouchWorker, ['stepped', 300]); // its next renewal clears the suspicion
    expect(await rescueOnce()).toBe(1);
    const row = await jobRow(db, id);
    expect(row).toMatchObject({ state: 'failed', crash_count: 0 });
    expect(row.errors.at(-1)).toMatchObject({ kind: 'lease-lost' });
  });

  it('a holder seen alive after its lease expired lost the lease: the job is taken back without a crash', async () => {
    const id = await expiredClaim('live-seen', 'alive');
    await setLiveness('alive', '0 seconds', '+3 seconds');
    const events = new Events();
    const rescued: EngineEvents['lease:rescued'][] = [];
    events.on('lease:rescued', (e) => rescued.push(e));
    expect(await new LeaseRescuer({ db, restartGraceMs: 0, events }).runOnce()).toBe(1);
    // Never suspected: the verdict is a plain "not a crash", never unknown.
    expect(rescued.map((e) => e.crashed)).toEqual([false]);
    const row = await jobRow(db, id);
    expect(row).toMatchObject({ state: 'failed', crash_count: 0, last_error: 'lease expired while its worker was alive' });
    expect(row.errors.at(-1)).toMatchObject({ kind: 'lease-lost' });
  });

  it('a holder restarted under the same id is dead: the expired lease of its earlier incarnation is a crash, though the id is alive', async () => {
    const id = await expiredClaim('live-restarted', 'restarted');
    // The process that took the lease is gone; a new one announced itself under the same id after the lease was written.
    await db.query(
      `INSERT INTO stampede.workers (worker_id, started_at, last_seen_at, expires_at, ttl_ms) VALUES ($1, now(), now(), now() + interval '3 seconds', 300)`,
      ['restarted'],
    );
    expect(await rescueOnce()).toBe(1);
    const row = await jobRow(db, id);
    expect(row).toMatchObject({ state: 'failed', crash_count: 1 });
    expect(row.errors.at(-1)).toMatchObject({ kind: 'lease-expired' });
  });

  it("a restarted holder's first renewal comes after it announced the new incarnation, so the old one's expired lease is still a crash", async () => {
    await new WorkerLiveness(db, 'reborn', systemClock, createLogger('test'), 1_000).begin(); // the incarnation that takes the lease
    const id = await expiredClaim('live-reborn', 'reborn');
    // It died. The restarted process's liveness loop renews first thing, and a rescue pass runs right after that renewal.
    await new WorkerLiveness(db, 'reborn', systemClock, createLogger('test'), 1_000).runOnce();
    expect(await rescueOnce()).toBe(1);
    const row = await jobRow(db, id);
    expect(row).toMatchObject({ state: 'failed', crash_count: 1 });
    expect(row.errors.at(-1)).toMatchObject({ kind: 'lease-expired' });
  });

  it('a holder neither dead nor seen since its lease expired is undecided: left for a later pass, then judged', async () => {
    const id = await expiredClaim('live-undecided', 'quiet');
    await setLiveness('quiet', '-1 hour', '+3 seconds');
    expect(await rescueOnce()).toBe(0);
    expect(await jobRow(db, id)).toMatchObject({ state: 'claimed' });
    await setLiveness('quiet', '0 seconds', '+3 seconds'); // it speaks: alive
    expect(await rescueOnce()).toBe(1);
    expect(await jobRow(db, id)).toMatchObject({ crash_count: 0 });
  });

  it('after a Postgres restart, a silent holder is not convicted until live workers had the grace period to reconnect', async () => {
    const id = await expiredClaim('live-restart', 'rebooting');
    await setLiveness('rebooting', '-10 seconds', '-5 seconds');
    // The test server started less than an hour ago: within a grace of an hour, silence proves nothing yet.
    expect(await rescueOnce(3_600_000)).toBe(0);
    expect(await jobRow(db, id)).toMatchObject({ state: 'claimed' });
    await until('convicted once the grace is over and its ttl of silence has passed', async () => (await rescueOnce(0)) === 1);
    expect(await jobRow(db, id)).toMatchObject({ crash_count: 1 });
  });
});

describe('a live worker that loses a lease', () => {
  /** A slow job with heartbeats off on a live worker: its lease runs out under it and the rescuer takes it back. */
  async function slowJobRescued(queue: string) {
    const job = await enqueue(db, queue, {});
    const events = new Events();
    const gate = { open: false };
    const rescued = events.waitFor('lease:rescued', (e) => e.jobId === job.id);
    startWorker({ handlers: { [queue]: () => until('gate', () => gate.open, 20_000, 20) }, leaseMs: 300, heartbeatMs: 0, events, workerId: `${queue}-slow` });
    const r: EngineEvents['lease:rescued'] = await rescued;
    gate.open = true;
    return { r, row: await jobRow(db, job.id) };
  }

  it('is not charged a crash: the job is taken back, its crash count stays 0', async () => {
    const { r, row } = await slowJobRescued('live-slow');
    expect(r.crashed).toBe(false);
    expect(row.crash_count).toBe(0);
  });

  it('negative control: the crash-on-any-expiry mutant charges it a crash', async () => {
    useMutant('crash-on-any-expiry');
    const { r, row } = await slowJobRescued('live-slow-mutant');
    expect(r.crashed).toBe(true);
    expect(row.crash_count).toBe(1);
  });

  it('a worker keeps its liveness row while it runs and deletes it when it stops cleanly', async () => {
    const w = startWorker({ handlers: { 'live-row': () => {} }, workerId: 'row-keeper' });
    const seen = () => db.query('SELECT last_seen_at FROM stampede.workers WHERE worker_id = $1', [w.id]).then((r) => r.rows[0]?.last_seen_at as Date | undefined);
    const first = (await until('first renewal', seen))!;
    await until('renewed again', async () => ((await seen())?.getTime() ?? 0) > first.getTime());
    await w.stop(0);
    expect(await seen()).toBeUndefined();
  });
});
