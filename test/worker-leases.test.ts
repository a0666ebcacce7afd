import { afterEach, describe, expect, it } from 'vitest';
import { enqueue, enqueueMany } from '../engine/enqueue.ts';
import { Events, type EngineEvents } from '../engine/events.ts';
import { SeededRng } from '../engine/rng.ts';
import { systemClock } from '../engine/clock.ts';
import { Worker } from '../engine/worker/worker.ts';
import type { MutantName } from '../harness/mutants/index.ts';
import { useMutant } from './support/mutant.ts';
import type { WorkerOptions } from '../engine/worker/options.ts';
import { Db } from '../engine/db.ts';
import { freshDatabase } from './support/db.ts';
import { countByState, jobRow } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { db, url } = await freshDatabase({ maxConnections: 20 });
const workers: Worker[] = [];
const pools: Db[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(0)));
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function startWorker(options: Omit<WorkerOptions, 'db'> & { db?: Db }): Worker {
  const w = new Worker({ db, rng: new SeededRng(7), pollMs: 20, rescueIntervalMs: 50, ...options });
  workers.push(w);
  w.start();
  return w;
}

/** `jobs` jobs claimed by 8 workers, each with its own pool; returns claims per job id and per worker. */
async function eightWorkersDrain(queue: string, jobs: number, mutant?: MutantName) {
  if (mutant) useMutant(mutant);
  await enqueueMany(db, Array.from({ length: jobs }, (_, i) => ({ queue, payload: { i } })));
  const events = new Events();
  const perJob = new Map<number, number>();
  const perWorker = new Map<string, number>();
  events.on('job:claimed', (e) => {
    perJob.set(e.jobId, (perJob.get(e.jobId) ?? 0) + 1);
    perWorker.set(e.workerId, (perWorker.get(e.workerId) ?? 0) + 1);
  });
  for (let i = 0; i < 8; i++) {
    const pool = new Db({ connectionString: url, maxConnections: 4 });
    pools.push(pool);
    startWorker({ db: pool, handlers: { [queue]: () => {} }, concurrency: 16, events, workerId: `${queue}-w${i}` });
  }
  await until(`${jobs} done`, async () => (await countByState(db, queue)).done === jobs, 120_000, 200);
  return { perJob, perWorker };
}

describe('claims', () => {
  it('8 concurrent workers on 20,000 jobs: every job claimed exactly once per attempt, never by two at once', async () => {
    const { perJob, perWorker } = await eightWorkersDrain('herd', 20_000);
    expect(perJob.size).toBe(20_000);
    expect([...perJob.values()].every((n) => n === 1)).toBe(true);
    // The work really was shared: no single worker did it all.
    expect(perWorker.size).toBe(8);
  });

  it('the no-skip-locked mutant double-claims under the same load (the check above can fail)', async () => {
    const { perJob } = await eightWorkersDrain('herd-mutant', 1500, 'no-skip-locked');
    expect([...perJob.values()].some((n) => n > 1)).toBe(true);
  });
});

describe('rescue: false', () => {
  // A holder long dead: its lease ran out a minute ago.
  const orphan = async (queue: string) => {
    const job = await enqueue(db, queue, {});
    await db.query(`UPDATE stampede.jobs SET state = 'claimed', attempts = 1, lease_owner = 'gone', lease_token = gen_random_uuid(), lease_expires_at = now() - interval '1 min' WHERE id = $1`, [job.id]);
    return job.id;
  };

  it('a worker with rescue: false takes back no expired lease, while it claims and runs other work; one with the rescuer on does', async () => {
    const id = await orphan('orphan');
    startWorker({ rescue: false, handlers: { orphan: () => {}, tick: () => {} } });
    // Work it does meanwhile: 20 jobs one after another, each claimed after the last one finished, over many rescue intervals.
    for (let i = 0; i < 20; i++) {
      const t = await enqueue(db, 'tick', { i });
      await until(`tick ${i} done`, async () => (await jobRow(db, t.id)).state === 'done', 10_000, 10);
    }
    expect((await jobRow(db, id)).state).toBe('claimed');
    // The control: the same job, a worker with its rescuer on.
    startWorker({ handlers: { orphan: () => {} } });
    await until('the orphan rescued and run', async () => (await jobRow(db, id)).state === 'done', 10_000, 20);
  });
});

describe('leases, heartbeats and fencing', () => {
  it('a slow-but-alive job longer than the visibility timeout keeps its lease through heartbeats', async () => {
    const job = await enqueue(db, 'slow-hb', {});
    const events = new Events();
    const claims: number[] = [];
    events.on('job:claimed', (e) => claims.push(e.jobId));
    startWorker({ handlers: { 'slow-hb': () => systemClock.sleep(1500) }, leaseMs: 400, heartbeatMs: 100, events });
    startWorker({ handlers: { 'slow-hb': () => {} }, leaseMs: 400, events, workerId: 'thief' });
    await until('done', async () => (await jobRow(db, job.id)).state === 'done');
    expect(claims).toEqual([job.id]);
    expect((await jobRow(db, job.id)).attempts).toBe(1);
  });

  it('the same job with heartbeats off is stolen, and the fence refuses the first worker\'s late completion', async () => {
    const job = await enqueue(db, 'slow-nohb', {});
    const events = new Events();
    const claims: EngineEvents['job:claimed'][] = [];
    events.on('job:claimed', (e) => claims.push(e));
    const refused = events.waitFor('lease:lost', (e) => e.jobId === job.id && e.phase === 'complete');
    const gate = { open: false };
    startWorker({
      handlers: { 'slow-nohb': () => until('gate', () => gate.open, 20_000, 20) },
      leaseMs: 300,
      heartbeatMs: 0,
      events,
      workerId: 'slow',
      // One slot: once its lease is rescued (its holder alive, so not a suspect) the job is claimable by
      // anyone, and a 'slow' with free slots could take it back itself; the thief must be the other worker.
      concurrency: 1,
    });
    await until('first claim', () => claims.length === 1);
    startWorker({ handlers: { 'slow-nohb': () => until('gate', () => gate.open, 20_000, 20) }, leaseMs: 60_000, heartbeatMs: 0, events, workerId: 'second' });
    await until('stolen', () => claims.length === 2, 10_000);
    expect(claims.map((c) => [c.workerId, c.attempt])).toEqual([['slow', 1], ['second', 2]]);
    gate.open = true; // both finish; the first one's completion must be refused
    const lost = await refused;
    expect(lost.workerId).toBe('slow');
    await until('done', async () => (await jobRow(db, job.id)).state === 'done');
  });

  it('the no-fencing mutant accepts that stale completion (the fence test can fail)', async () => {
    const job = await enqueue(db, 'slow-unfenced', {});
    const events = new Events();
    const completions: string[] = [];
    events.on('job:completed', (e) => completions.push(e.workerId));
    const claims: string[] = [];
    events.on('job:claimed', (e) => claims.push(e.workerId));
    const gate = { first: false };
    useMutant('no-fencing');
    startWorker({ handlers: { 'slow-unfenced': () => until('gate', () => gate.first, 20_000, 20) }, leaseMs: 300, heartbeatMs: 0, concurrency: 1, events, workerId: 'slow' });
    await until('first claim', () => claims.length === 1);
    startWorker({ handlers: { 'slow-unfenced': () => systemClock.sleep(60_000) }, leaseMs: 60_000, events, workerId: 'second' });
    await until('stolen', () => claims.length === 2, 10_000);
    gate.first = true;
    await until('stale completion accepted', () => completions.includes('slow'));
    expect((await jobRow(db, job.id)).state).toBe('done'); // while "second" is still running it
  });
});

describe('a dropped connection', () => {
  it('workers survive pg_terminate_backend of all their connections; no job is lost', async () => {
    await enqueueMany(db, Array.from({ length: 400 }, (_, i) => ({ queue: 'drop', payload: { i } })));
    const pool = new Db({ connectionString: url, maxConnections: 6, applicationName: 'victim' });
    pools.push(pool);
    const events = new Events();
    let completed = 0;
    events.on('job:completed', () => completed++);
    startWorker({ db: pool, handlers: { drop: () => systemClock.sleep(5) }, concurrency: 4, events, leaseMs: 2000 });
    await until('some progress', () => completed > 50);
    const killed = await db.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'victim%'");
    expect(killed.rowCount).toBeGreaterThan(0);
    await until('all 400 done', async () => (await countByState(db, 'drop')).done === 400, 60_000, 100);
  });
});
