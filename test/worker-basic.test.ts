import { afterEach, describe, expect, it } from 'vitest';
import { enqueue, enqueueMany } from '../engine/enqueue.ts';
import { deadLetterDepth, listDeadLetters } from '../engine/dead-letters.ts';
import { listAudit, retryJob } from '../engine/control/index.ts';
import { DEFAULTS } from '../engine/defaults.ts';
import { ManualClock, systemClock } from '../engine/clock.ts';
import { Events } from '../engine/events.ts';
import { SeededRng } from '../engine/rng.ts';
import { NOTIFY_TRAILING_CLAIMS_MS, Worker } from '../engine/worker/worker.ts';
import { resolveQueueOptions, type WorkerOptions } from '../engine/worker/options.ts';
import { ValidationError } from '../engine/errors.ts';
import { freshDatabase } from './support/db.ts';
import { countByState, jobRow } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { db } = await freshDatabase({ maxConnections: 20 });
const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(0)));
});

function startWorker(options: Omit<WorkerOptions, 'db'>): Worker {
  const w = new Worker({ db, rng: new SeededRng(1), pollMs: 50, rescueIntervalMs: 50, backoffBaseMs: 10, backoffCapMs: 50, ...options });
  workers.push(w);
  w.start();
  return w;
}

describe('worker', () => {
  it('runs every enqueued job to done, handing each its payload', async () => {
    const seen: number[] = [];
    await enqueueMany(db, Array.from({ length: 200 }, (_, i) => ({ queue: 'basic', payload: { i } })));
    startWorker({ handlers: { basic: (p: { i: number }) => void seen.push(p.i) }, concurrency: 8 });
    await until('200 jobs done', async () => (await countByState(db, 'basic')).done === 200);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  it('wakes on NOTIFY rather than waiting out a long poll interval', async () => {
    const events = new Events();
    const listening = events.waitFor('worker:listening');
    startWorker({ handlers: { notified: () => {} }, pollMs: 60_000, events });
    await listening;
    const completed = events.waitFor('job:completed', (e) => e.queue === 'notified');
    await enqueue(db, 'notified', {});
    await completed; // a 60 s poll would time the test out
  });

  it('claims again at the trailing offsets after a NOTIFY (the first, and the last) even when handlers woke it in between, for jobs whose NOTIFY the throttle skipped', async () => {
    // Node time stands still unless advanced, so the poll (60 s) never comes and only the trailing claims can find B and C.
    const clock = new ManualClock(Date.now());
    const events = new Events();
    const listening = events.waitFor('worker:listening');
    startWorker({ handlers: { trail: () => {} }, pollMs: 60_000, clock, events });
    await listening;
    await db.query("SELECT setval('stampede.notify_clock_ms', 0)"); // A's enqueue notifies
    const aDone = events.waitFor('job:completed', (e) => e.queue === 'trail');
    await enqueue(db, 'trail', { job: 'A' });
    await aDone; // A's handler woke the worker (its claim had found A): that claim found nothing
    await systemClock.sleep(200); // let those claims finish, so none of them can find what comes next
    const silent = 9e15; // later enqueues see a NOTIFY "just now" and skip their own
    await db.query('SELECT setval($1::regclass, $2)', ['stampede.notify_clock_ms', silent]);
    const silentEnqueue = async (job: string) => {
      const j = await enqueue(db, 'trail', { job });
      expect(Number((await db.query('SELECT last_value FROM stampede.notify_clock_ms')).rows[0].last_value)).toBe(silent); // it did not notify
      await systemClock.sleep(200);
      expect((await jobRow(db, j.id)).state).toBe('pending'); // nothing claims it before a trailing claim is due
      return j;
    };
    const first = NOTIFY_TRAILING_CLAIMS_MS[0];
    const last = NOTIFY_TRAILING_CLAIMS_MS.at(-1)!;
    const b = await silentEnqueue('B');
    clock.advance(first);
    await until(`B done by the claim ${first} ms after the NOTIFY`, async () => (await jobRow(db, b.id)).state === 'done');
    // The clock now stands between the first offset and the next: C waits, unclaimed, until the clock moves on.
    const c = await silentEnqueue('C');
    clock.advance(last - first);
    await until(`C done by the claim ${last} ms after the NOTIFY`, async () => (await jobRow(db, c.id)).state === 'done');
  });

  it('retries a failing job with backoff, then dead-letters it after exactly maxAttempts with the error history', async () => {
    const job = await enqueue(db, 'always-fails', { n: 1 }, { maxAttempts: 4 });
    const events = new Events();
    const attempts: number[] = [];
    const failures: { dbFailedAt: number; retryAt: number }[] = [];
    events.on('job:failed', (e) => {
      attempts.push(e.attempt);
      failures.push(e);
    });
    const dbBefore = (await db.query('SELECT now() AS now')).rows[0].now.getTime();
    startWorker({ handlers: { 'always-fails': () => { throw new Error('downstream said 503'); } }, events });
    await until('job dead', async () => (await jobRow(db, job.id)).state === 'dead');
    expect(attempts).toEqual([1, 2, 3, 4]);
    // Each failure carries the database's time of it, and its retry is due no earlier.
    for (const f of failures) {
      expect(f.dbFailedAt).toBeGreaterThanOrEqual(dbBefore);
      expect(f.retryAt).toBeGreaterThanOrEqual(f.dbFailedAt);
    }
    const row = await jobRow(db, job.id);
    expect(row.attempts).toBe(4);
    expect(row.errors.map((e) => e.error)).toEqual(Array(4).fill('Error: downstream said 503'));
    const [dl] = await listDeadLetters(db, { queue: 'always-fails' });
    expect(dl).toMatchObject({ jobId: job.id, attempts: 4, payload: { n: 1 } });
    expect(dl.reason).toContain('attempts exhausted');
    expect(dl.errors).toHaveLength(4);
    expect(await deadLetterDepth(db, 'always-fails')).toBe(1);
  });

  it('records every shape of handler failure: throw, rejection, non-Error values, timeout', async () => {
    const handlers = {
      'throws-sync': () => { throw new TypeError('bad field'); },
      rejects: async () => Promise.reject(new Error('async boom')),
      'throws-string': () => { throw 'just a string'; },
      'throws-undefined': () => { throw undefined; },
      'throws-object': () => { throw { code: 42 }; },
      'too-slow': (_p: unknown, ctx: { signal: AbortSignal }) =>
        new Promise((resolve) => ctx.signal.addEventListener('abort', resolve)),
    };
    const ids: Record<string, number> = {};
    for (const q of Object.keys(handlers)) ids[q] = (await enqueue(db, q, {}, { maxAttempts: 1 })).id;
    startWorker({ handlers, timeoutMs: 200 });
    for (const id of Object.values(ids)) await until(`job ${id} dead`, async () => (await jobRow(db, id)).state === 'dead');
    const lastError = async (q: string) => (await jobRow(db, ids[q])).last_error;
    expect(await lastError('throws-sync')).toBe('TypeError: bad field');
    expect(await lastError('rejects')).toBe('Error: async boom');
    expect(await lastError('throws-string')).toBe('NonErrorThrown: just a string');
    expect(await lastError('throws-undefined')).toBe('NonErrorThrown: undefined');
    expect(await lastError('throws-object')).toBe('NonErrorThrown: {"code":42}');
    expect(await lastError('too-slow')).toBe('JobTimeoutError: handler exceeded its timeout of 200 ms');
    expect((await jobRow(db, ids['too-slow'])).errors[0].kind).toBe('timeout');
  });

  it('redrives a dead job back to pending with a fresh budget', async () => {
    let fail = true;
    const job = await enqueue(db, 'redrive', {}, { maxAttempts: 1 });
    startWorker({ handlers: { redrive: () => { if (fail) throw new Error('not yet'); } } });
    await until('dead', async () => (await jobRow(db, job.id)).state === 'dead');
    fail = false;
    const ops = { by: 'test', reason: 'fixed the handler' };
    expect(await retryJob(db, job.id, ops)).toMatchObject({ from: 'dead' });
    await until('done after redrive', async () => (await jobRow(db, job.id)).state === 'done');
    expect(await deadLetterDepth(db, 'redrive')).toBe(0);
    await expect(retryJob(db, job.id, ops)).rejects.toThrow(/it is done/);
    expect(await listAudit(db, { jobId: job.id })).toMatchObject([{ verb: 'retry', detail: { from: 'dead', deadCode: 'attempts_exhausted', deadReason: 'attempts exhausted: Error: not yet' } }]);
  });

  it('a heartbeat after effectOnce committed is not mistaken for a lost lease', async () => {
    await db.query('CREATE TABLE IF NOT EXISTS hb_effects (job_id bigint)');
    const events = new Events();
    const lost: unknown[] = [];
    events.on('lease:lost', (e) => lost.push(e));
    const jobs = await enqueueMany(db, Array.from({ length: 5 }, () => ({ queue: 'effect-then-linger', payload: {} })));
    startWorker({
      handlers: {
        'effect-then-linger': async (_p, ctx) => {
          await ctx.effectOnce((tx) => tx.query('INSERT INTO hb_effects VALUES ($1)', [ctx.job.id]));
          await new Promise((r) => setTimeout(r, 200)); // heartbeats (every 20 ms) keep firing meanwhile
        },
      },
      heartbeatMs: 20,
      events,
    });
    for (const j of jobs) await until('done', async () => (await jobRow(db, j.id)).state === 'done');
    expect(lost).toEqual([]);
    expect((await db.query('SELECT count(*)::int AS n FROM hb_effects')).rows[0].n).toBe(5);
  });

  it('refuses bad options with the field named', () => {
    expect(() => new Worker({ db, handlers: {} })).toThrow(ValidationError);
    expect(() => new Worker({ db, handlers: { q: () => {} }, leaseMs: -5 })).toThrow(/leaseMs/);
    expect(() => new Worker({ db, handlers: { q: () => {} }, concurrency: 0 })).toThrow(/concurrency/);
  });

  it('refuses a misspelt option and a missing db, where they were ignored (the worker ran at its defaults)', () => {
    const handlers = { q: () => {} };
    expect(() => new Worker({ db, handlers, concurency: 50 } as any)).toThrow(/^concurency: is not a Worker option; expected one of .*concurrency/);
    expect(() => new Worker({ db, handlers, queues: { q: { leasMs: 5_000 } } } as any)).toThrow(/^queues\["q"\]\.leasMs: is not a per-queue option/);
    expect(() => new Worker({ handlers } as any)).toThrow(/^db: expected a Db/);
    // Every documented option is still taken, undefined included (a CLI flag left out).
    expect(() => new Worker({ db, handlers, concurrency: undefined, claimAhead: 0, listen: false, rescue: false, queues: { q: { timeoutMs: 100 } } })).not.toThrow();
  });

  it('refuses a heartbeat not shorter than its lease, and gives a short lease a heartbeat a third of it', () => {
    const handlers = { q: () => {}, r: () => {} };
    expect(() => new Worker({ db, handlers, leaseMs: 1_000, heartbeatMs: 1_000 })).toThrow(
      /^heartbeatMs: 1000 ms is not shorter than queue "q"'s leaseMs \(1000 ms\)/,
    );
    expect(() => new Worker({ db, handlers, leaseMs: 5_000, queues: { r: { heartbeatMs: 6_000 } } })).toThrow(/^queues\["r"\]\.heartbeatMs: 6000 ms/);
    // Off is allowed whatever the lease.
    expect(() => new Worker({ db, handlers, leaseMs: 1_000, heartbeatMs: 0 })).not.toThrow();
    expect(resolveQueueOptions({ db, handlers, leaseMs: 3_000 }, 'q').heartbeatMs).toBe(1_000);
    expect(resolveQueueOptions({ db, handlers }, 'q').heartbeatMs).toBe(DEFAULTS.heartbeatMs);
    expect(resolveQueueOptions({ db, handlers, leaseMs: 3_000, queues: { r: { leaseMs: 90_000 } } }, 'r').heartbeatMs).toBe(DEFAULTS.heartbeatMs);
    expect(resolveQueueOptions({ db, handlers, leaseMs: 3_000, heartbeatMs: 2_000 }, 'q').heartbeatMs).toBe(2_000);
  });
});
