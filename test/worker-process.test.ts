import { describe, expect, it } from 'vitest';
import { enqueue } from '../engine/enqueue.ts';
import { freshDatabase } from './support/db.ts';
import { jobRow } from './support/jobs.ts';
import { until } from './support/wait.ts';
import { spawnWorker } from './support/worker-process.ts';
import { freePort } from '../harness/postgres/embedded.ts';
import type { NodeProcess } from '../engine/supervisor/node-process.ts';

const { db, url } = await freshDatabase();
await db.query('CREATE TABLE test_deliveries (job_id bigint, attempt int, worker_id text, at timestamptz DEFAULT clock_timestamp())');
const deliveries = async (id: number) =>
  (await db.query('SELECT attempt, worker_id FROM test_deliveries WHERE job_id = $1 ORDER BY at', [id])).rows;

describe('worker processes', () => {
  it('a worker SIGKILLed mid-job: another runs it again after the lease expires, and the history shows both attempts', async () => {
    const job = await enqueue(db, 'slow', { ms: 60_000 });
    const first = spawnWorker(url, ['--lease-ms', '1000', '--heartbeat-ms', '300', '--worker-id', 'doomed']);
    await first.ready;
    await until('first delivery', async () => (await deliveries(job.id)).length === 1);
    first.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    // The job is still claimed by the dead worker until its lease runs out.
    expect((await jobRow(db, job.id)).state).toBe('claimed');
    await db.query('UPDATE stampede.jobs SET payload = $2 WHERE id = $1', [job.id, { ms: 10 }]);
    const second = spawnWorker(url, ['--lease-ms', '1000', '--worker-id', 'survivor']);
    await second.ready;
    await until('done by the second worker', async () => (await jobRow(db, job.id)).state === 'done');
    expect(await deliveries(job.id)).toEqual([
      { attempt: 1, worker_id: 'doomed' },
      { attempt: 2, worker_id: 'survivor' },
    ]);
    const row = await jobRow(db, job.id);
    expect(row.errors).toHaveLength(1);
    expect(row.errors[0]).toMatchObject({ attempt: 1, kind: 'lease-expired' });
    expect(row.errors[0].error).toContain('doomed presumed dead');
  });

  /** Starts workers one after another until the job is dead; each must die of the job. Returns the crashes and the worker that saw it dead. */
  async function crashUntilDead(jobId: number, flags: string[]): Promise<{ crashes: number; survivor?: NodeProcess }> {
    let crashes = 0;
    while ((await jobRow(db, jobId)).state !== 'dead') {
      const w = spawnWorker(url, ['--lease-ms', '300', '--heartbeat-ms', '100', '--poll-ms', '50', ...flags]);
      const exit = await Promise.race([w.exited, until('job dead', async () => (await jobRow(db, jobId)).state === 'dead')]);
      if (exit === true) return { crashes, survivor: w };
      expect((exit as { signal: string }).signal).toBe('SIGKILL');
      crashes++;
    }
    return { crashes };
  }

  it('a job that kills its process every time is dead-lettered after maxCrashes, fewer than its attempts; the worker that convicts it says so', async () => {
    const job = await enqueue(db, 'suicide', {}, { maxAttempts: 6 });
    const { crashes, survivor } = await crashUntilDead(job.id, ['--max-crashes', '2']);
    expect(crashes).toBe(2);
    const row = await jobRow(db, job.id);
    expect(row).toMatchObject({ attempts: 2, crash_count: 2 });
    const dl = (await db.query('SELECT reason FROM stampede.dead_letters WHERE job_id = $1', [job.id])).rows[0];
    expect(dl.reason).toBe('crashed its worker 2 times');
    // Its rescuer convicted the job: the line is on its way to the pipe once the row is dead.
    const conviction = `job ${job.id} dead-lettered on suicide: crash loop convicted: crashed its worker 2 times (after 2 attempts)`;
    await until('the conviction line', () => survivor!.stderr.includes(conviction));
    expect(survivor!.stderr.split('\n').filter((l) => l.endsWith(conviction))).toEqual([expect.stringMatching(/^ERROR worker:\S+: job/)]);
  });

  it('with crash detection set above the budget, a process-killing job still dies after exactly maxAttempts', async () => {
    const job = await enqueue(db, 'suicide', {}, { maxAttempts: 3 });
    expect((await crashUntilDead(job.id, ['--max-crashes', '100'])).crashes).toBe(3);
    const row = await jobRow(db, job.id);
    expect(row).toMatchObject({ attempts: 3, crash_count: 3 });
    const dl = (await db.query('SELECT reason FROM stampede.dead_letters WHERE job_id = $1', [job.id])).rows[0];
    expect(dl.reason).toContain('attempts exhausted');
  });

  it('SIGTERM: stops claiming, hands back what cannot finish in the grace period, exits 0', async () => {
    const job = await enqueue(db, 'slow', { ms: 60_000 });
    const w = spawnWorker(url, ['--grace-ms', '300']);
    await until('delivered', async () => (await deliveries(job.id)).length >= 1);
    w.kill('SIGTERM');
    expect(await w.exited).toEqual({ code: 0, signal: null });
    const row = await jobRow(db, job.id);
    expect(row).toMatchObject({ state: 'pending', attempts: 0 });
  });

  it('serves /metrics on loopback when given a port, with RED counters and queue state', async () => {
    const port = await freePort();
    const w = spawnWorker(url, ['--metrics-port', String(port), '--sample-queue-state']);
    await w.ready;
    const job = await enqueue(db, 'noop', {});
    await until('done', async () => (await jobRow(db, job.id)).state === 'done');
    const text = await until('counter exported', async () => {
      const body = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
      return /stampede_jobs_completed_total\{[^}]*queue="noop"[^}]*\} [1-9]/.test(body) && body;
    });
    expect(text).toMatch(/stampede_queue_oldest_unclaimed_age_seconds/);
    expect(text).toMatch(/stampede_dead_letter_depth/);
  });

  it('refuses a bad flag with exit code 2 and the usage', async () => {
    const w = spawnWorker(url, ['--concurrency', 'lots']);
    expect((await w.exited).code).toBe(2);
    expect(w.stderr).toContain('--concurrency: expected a positive integer, got "lots"');
    expect(w.stderr).toContain('usage:');
  });
});
