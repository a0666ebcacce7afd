import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock.ts';
import {
  cancelJob,
  deadLetterJob,
  JobNotFoundError,
  JobStateError,
  listAudit,
  pauseQueue,
  QueueStateError,
  redriveDeadLetters,
  resumeQueue,
  retryJob,
  UnknownQueueError,
  getQueueControl,
} from '../engine/control/index.ts';
import { listDeadLetters } from '../engine/dead-letters.ts';
import { enqueue, enqueueMany } from '../engine/enqueue.ts';
import { JobCancelledError, ValidationError } from '../engine/errors.ts';
import { Events } from '../engine/events.ts';
import { SeededRng } from '../engine/rng.ts';
import type { WorkerOptions } from '../engine/worker/options.ts';
import { Worker } from '../engine/worker/worker.ts';
import { applyMutant } from '../harness/mutants/index.ts';
import { freshDatabase } from './support/db.ts';
import { countByState, jobRow } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { db } = await freshDatabase();
const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(0)));
});

function startWorker(options: Omit<WorkerOptions, 'db'>): Worker {
  const w = new Worker({ db, rng: new SeededRng(3), pollMs: 20, rescueIntervalMs: 50, ...options });
  workers.push(w);
  w.start();
  return w;
}

const alice = { by: 'alice', reason: 'incident 42' };

/** A job in `failed`, its retry far in the future. */
async function failedJob(queue: string): Promise<number> {
  const job = await enqueue(db, queue, {});
  await db.query(
    `UPDATE stampede.jobs SET state = 'claimed', lease_owner = 't', lease_token = gen_random_uuid(), lease_expires_at = now() + interval '1 h' WHERE id = $1`,
    [job.id],
  );
  await db.query(`UPDATE stampede.jobs SET state = 'failed', run_at = now() + interval '1 h', attempts = 1, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL WHERE id = $1`, [job.id]);
  return job.id;
}

async function doneJob(queue: string): Promise<number> {
  const id = await failedJob(queue);
  await db.query(`UPDATE stampede.jobs SET state = 'claimed', lease_owner = 't', lease_token = gen_random_uuid(), lease_expires_at = now() + interval '1 h' WHERE id = $1`, [id]);
  await db.query(`UPDATE stampede.jobs SET state = 'done', finished_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL WHERE id = $1`, [id]);
  return id;
}

describe('cancel', () => {
  it('cancels a pending and a failed job, records who and why, and refuses a second cancel', async () => {
    const pending = await enqueue(db, 'c1', {});
    const failed = await failedJob('c1');
    expect(await cancelJob(db, pending.id, alice)).toEqual({ jobId: pending.id, queue: 'c1', from: 'pending' });
    expect((await cancelJob(db, failed, alice)).from).toBe('failed');
    expect((await jobRow(db, pending.id)).state).toBe('cancelled');
    expect((await jobRow(db, failed)).state).toBe('cancelled');
    const audit = await listAudit(db, { jobId: pending.id });
    expect(audit).toMatchObject([{ actor: 'alice', reason: 'incident 42', verb: 'cancel', queue: 'c1', jobId: pending.id, detail: { from: 'pending' } }]);
    const again = await cancelJob(db, pending.id, alice).catch((e) => e);
    expect(again).toBeInstanceOf(JobStateError);
    expect(again.message).toMatch(/cancel job \d+: it is cancelled; expected pending or failed or claimed/);
    expect(await listAudit(db, { jobId: pending.id })).toHaveLength(1); // the refusal wrote nothing
  });

  it('refuses a finished job, an unknown id, and a missing who or why, changing nothing', async () => {
    const done = await doneJob('c2');
    await expect(cancelJob(db, done, alice)).rejects.toThrow(JobStateError);
    expect((await jobRow(db, done)).state).toBe('done');
    await expect(cancelJob(db, 987_654_321, alice)).rejects.toThrow(JobNotFoundError);
    const pending = await enqueue(db, 'c2', {});
    await expect(cancelJob(db, pending.id, { by: '', reason: 'x' })).rejects.toThrow(/^by: expected a non-empty string/);
    await expect(cancelJob(db, pending.id, { by: 'bob', reason: ' ' })).rejects.toThrow(ValidationError);
    expect((await jobRow(db, pending.id)).state).toBe('pending');
  });

  it("cancels a claimed job: its handler's signal aborts at the next heartbeat and its late result is refused", async () => {
    const job = await enqueue(db, 'c3', {});
    const events = new Events();
    let reason: unknown;
    const started = events.waitFor('job:started', (e) => e.jobId === job.id);
    startWorker({
      events,
      leaseMs: 5_000,
      heartbeatMs: 50,
      handlers: {
        c3: async (_p, ctx) => {
          await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
          reason = ctx.signal.reason;
          // A handler that ignores the abort and returns normally: its completion must not overwrite the cancel.
        },
      },
    });
    await started;
    const cancelled = events.waitFor('job:cancelled', (e) => e.jobId === job.id);
    expect((await cancelJob(db, job.id, alice)).from).toBe('claimed');
    await cancelled;
    await until('the handler saw the abort', () => reason !== undefined);
    expect(reason).toBeInstanceOf(JobCancelledError);
    const row = await jobRow(db, job.id);
    expect(row.state).toBe('cancelled');
    expect(row.attempts).toBe(1);
  });

  it('the state machine refuses leaving cancelled, whoever writes', async () => {
    const job = await enqueue(db, 'c4', {});
    await cancelJob(db, job.id, alice);
    await expect(db.query(`UPDATE stampede.jobs SET state = 'pending' WHERE id = $1`, [job.id])).rejects.toThrow(/may not go from cancelled to pending/);
  });
});

describe('retry and dead-letter by hand', () => {
  it('retries a failed job now, keeping its attempts; a dead one with a fresh budget', async () => {
    const failed = await failedJob('r1');
    expect((await retryJob(db, failed, alice)).from).toBe('failed');
    const row = await jobRow(db, failed);
    expect(row.state).toBe('failed');
    expect(row.attempts).toBe(1);
    expect(row.run_at.getTime()).toBeLessThanOrEqual((await db.query('SELECT now() AS t')).rows[0].t.getTime());

    const poison = await enqueue(db, 'r1', {});
    await deadLetterJob(db, poison.id, { by: 'bob', reason: 'poison payload, ticket 7' });
    expect((await jobRow(db, poison.id)).state).toBe('dead');
    expect((await listDeadLetters(db, { queue: 'r1' }))[0]).toMatchObject({ jobId: poison.id, reason: 'dead-lettered by bob: poison payload, ticket 7' });
    expect((await retryJob(db, poison.id, alice)).from).toBe('dead');
    expect(await jobRow(db, poison.id)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(await listDeadLetters(db, { queue: 'r1' })).toEqual([]);
    expect((await listAudit(db, { jobId: poison.id })).map((a) => a.verb)).toEqual(['retry', 'dead-letter']);
  });

  it('refuses to retry a pending or done job, and to dead-letter a done or dead one', async () => {
    const pending = await enqueue(db, 'r2', {});
    await expect(retryJob(db, pending.id, alice)).rejects.toThrow(/retry job \d+: it is pending; expected failed or dead/);
    const done = await doneJob('r2');
    await expect(retryJob(db, done, alice)).rejects.toThrow(JobStateError);
    await expect(deadLetterJob(db, done, alice)).rejects.toThrow(/dead-letter job \d+: it is done/);
    await deadLetterJob(db, pending.id, alice);
    await expect(deadLetterJob(db, pending.id, alice)).rejects.toThrow(/it is dead/);
  });

  it('dead-letters a claimed job: its worker loses the lease at the next heartbeat, and the dead letter stands', async () => {
    const job = await enqueue(db, 'r3', {});
    const events = new Events();
    const started = events.waitFor('job:started', (e) => e.jobId === job.id);
    startWorker({ events, heartbeatMs: 50, handlers: { r3: (_p, ctx) => systemClock.sleep(60_000, ctx.signal) } });
    await started;
    const lost = events.waitFor('lease:lost', (e) => e.jobId === job.id);
    await deadLetterJob(db, job.id, alice);
    expect((await lost).phase).toBe('heartbeat');
    expect((await jobRow(db, job.id)).state).toBe('dead');
    expect(await listDeadLetters(db, { queue: 'r3' })).toHaveLength(1);
  });
});

describe('bulk redrive', () => {
  it('redrives one queue by reason, audits each job, and leaves the rest', async () => {
    const jobs = await enqueueMany(db, Array.from({ length: 5 }, (_, i) => ({ queue: 'b1', payload: { i } })));
    for (const [i, j] of jobs.entries()) await deadLetterJob(db, j.id, { by: 'bob', reason: i < 3 ? 'downstream 503' : 'bad payload' });
    const other = await enqueue(db, 'b1-other', {});
    await deadLetterJob(db, other.id, { by: 'bob', reason: 'downstream 503' });
    const redriven = await redriveDeadLetters(db, { queue: 'b1', reasonContains: '503' }, alice);
    expect(redriven).toEqual(jobs.slice(0, 3).map((j) => j.id));
    expect(await countByState(db, 'b1')).toEqual({ pending: 3, dead: 2 });
    expect((await listDeadLetters(db, { queue: 'b1-other' })).length).toBe(1);
    expect((await listAudit(db, { queue: 'b1' })).filter((a) => a.verb === 'redrive')).toHaveLength(3);
    expect(await redriveDeadLetters(db, { queue: 'b1', reasonContains: '503' }, alice)).toEqual([]); // known queue, nothing left
    expect(await redriveDeadLetters(db, { queue: 'b1', limit: 1 }, alice)).toEqual([jobs[3].id]);
  });

  it('refuses an unknown queue and a bad limit', async () => {
    await expect(redriveDeadLetters(db, { queue: 'no-such-queue' }, alice)).rejects.toThrow(UnknownQueueError);
    await expect(redriveDeadLetters(db, { queue: 'b1', limit: 0 }, alice)).rejects.toThrow(/^limit: 0 is not an integer/);
    await expect(redriveDeadLetters(db, { queue: 'bad queue!' }, alice)).rejects.toThrow(/^queue: "bad queue!" is not a queue name/);
  });
});

describe('pause and resume', () => {
  it('a paused queue is claimed by no worker; jobs wait, other queues run; resume releases them', async () => {
    await enqueue(db, 'p1', {});
    const paused = await pauseQueue(db, 'p1', alice);
    expect(paused.pausedAt).toBeInstanceOf(Date);
    expect(await getQueueControl(db, 'p1')).toMatchObject({ paused: true, pausedBy: 'alice', pausedReason: 'incident 42' });
    const events = new Events();
    const claimedPaused: number[] = [];
    events.on('job:claimed', (e) => e.queue === 'p1' && claimedPaused.push(e.jobId));
    startWorker({ events, handlers: { p1: () => {}, p2: () => {} } });
    const batch = await enqueueMany(db, Array.from({ length: 20 }, () => ({ queue: 'p1', payload: {} })));
    const runningJob = await enqueue(db, 'p2', {});
    // The other queue of the same worker runs: a claim over both queues ran after the batch was enqueued.
    await until('p2 done', async () => (await jobRow(db, runningJob.id)).state === 'done');
    expect(claimedPaused).toEqual([]);
    expect(await countByState(db, 'p1')).toEqual({ pending: 21 });
    await resumeQueue(db, 'p1', alice);
    await until('p1 drained', async () => (await countByState(db, 'p1')).done === 21);
    expect(claimedPaused).toContain(batch[0].id);
    expect((await listAudit(db, { queue: 'p1' })).map((a) => a.verb)).toEqual(['resume', 'pause']);
  });

  /** 4 busy workers drain `queue`; it is paused mid-drain. Returns the claims of it that began at or after pausedAt, and what is left. */
  async function pauseMidDrain(queue: string): Promise<{ late: number[]; pending: number }> {
    await enqueueMany(db, Array.from({ length: 2_000 }, (_, i) => ({ queue, payload: { i } })));
    const events = new Events();
    const claimedAt: number[] = [];
    events.on('job:claimed', (e) => e.queue === queue && claimedAt.push(e.dbClaimedAt));
    for (let i = 0; i < 4; i++) startWorker({ events, workerId: `${queue}-${i}`, concurrency: 8, handlers: { [queue]: () => systemClock.sleep(2), [`${queue}-other`]: () => {} } });
    await until('claims under way', () => claimedAt.length >= 50);
    const { pausedAt } = await pauseQueue(db, queue, alice);
    // Claims keep running (the other queue is served twice over), then look.
    for (let i = 0; i < 2; i++) {
      const other = await enqueue(db, `${queue}-other`, {});
      await until('the other queue served', async () => (await jobRow(db, other.id)).state === 'done');
    }
    return { late: claimedAt.filter((t) => t >= pausedAt.getTime()), pending: (await countByState(db, queue)).pending ?? 0 };
  }

  it('a pause amid busy claimers: no claim that began after pausedAt takes a job of the queue', async () => {
    const { late, pending } = await pauseMidDrain('p-race');
    expect(late).toEqual([]);
    expect(pending).toBeGreaterThan(0); // the pause landed mid-drain
  });

  it('negative control: with the no-pause-filter mutant the same check sees claims after the pause', async () => {
    const undo = applyMutant('no-pause-filter');
    try {
      expect((await pauseMidDrain('p-race-mutant')).late.length).toBeGreaterThan(0);
    } finally {
      await Promise.all(workers.splice(0).map((w) => w.stop(0)));
      undo();
    }
  });

  it('refuses to pause a paused queue (saying who paused it), to resume a running one, and an unknown queue', async () => {
    await enqueue(db, 'p3', {});
    await pauseQueue(db, 'p3', alice);
    await expect(pauseQueue(db, 'p3', { by: 'bob', reason: 'me too' })).rejects.toThrow(/pause queue "p3": already paused since .* by alice: incident 42/);
    await resumeQueue(db, 'p3', alice);
    const err = await resumeQueue(db, 'p3', alice).catch((e) => e);
    expect(err).toBeInstanceOf(QueueStateError);
    expect(err.message).toBe('resume queue "p3": it is not paused');
    await expect(pauseQueue(db, 'p3-typo', alice)).rejects.toThrow(UnknownQueueError);
    expect(await getQueueControl(db, 'p3-typo')).toBeNull();
    // allowNew pauses a queue before its first job.
    await pauseQueue(db, 'p3-new', { ...alice, allowNew: true });
    expect((await getQueueControl(db, 'p3-new'))?.paused).toBe(true);
  });
});
