// SIGTERM, as every deploy sends it, to the worker command started exactly as a user
// starts it, while a handler is mid-job: the worker drains and exits 0, and no job is
// left claimed (a launcher in between must not turn the drain into a SIGKILL).
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { enqueue } from '../engine/enqueue.ts';
import { freshDatabase } from './support/db.ts';
import { jobRow } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { db, url } = await freshDatabase();
await db.query('CREATE TABLE test_started (job_id bigint)');

const WORKER_FLAGS = ['--handlers', 'test/fixtures/cli-handlers.mjs', '--poll-ms', '100', '--grace-ms', '20000'];

// npx runs the bin under `sh -c`, and dash dies of the SIGTERM npx passes on; npx then
// kills itself with it (exit by SIGTERM, whatever the worker does). The worker, orphaned
// without the signal, notices its parent is gone and drains as on SIGTERM: so for npx the
// test asserts the drain (job done, worker gone), not npx's own status.
// 'SIGINT to the group' is a terminal's Ctrl-C: every process of the group gets it (the
// worker twice, once more relayed by npm).
type Launch = [command: string, args: string[], expected: 'exit 0' | 'drained', signal: 'SIGTERM' | 'SIGINT to the group'];
const LAUNCHES: Record<string, Launch> = {
  'npm run worker': ['npm', ['run', 'worker', '--', ...WORKER_FLAGS], 'exit 0', 'SIGTERM'],
  'npm run worker, Ctrl-C': ['npm', ['run', 'worker', '--', ...WORKER_FLAGS], 'exit 0', 'SIGINT to the group'],
  'npx stampede-queue worker': ['npx', ['--no-install', 'stampede-queue', 'worker', ...WORKER_FLAGS], 'drained', 'SIGTERM'],
  'node dist/bin/stampede.js worker': [process.execPath, ['dist/bin/stampede.js', 'worker', ...WORKER_FLAGS], 'exit 0', 'SIGTERM'],
  'npm run workers (the supervisor)': ['npm', ['run', 'workers', '--', '--processes', '2', '--', ...WORKER_FLAGS], 'exit 0', 'SIGTERM'],
};

const workerConnections = async () =>
  (await db.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'stampede:worker' AND datname = current_database()")).rows[0].n as number;

describe('SIGTERM (or Ctrl-C) to the worker command mid-job', () => {
  for (const [how, [command, args, expected, signal]] of Object.entries(LAUNCHES)) {
    it(`${how}: ${signal}, drains (${expected}), no job left claimed`, async () => {
      const job = await enqueue(db, 'hold', { ms: 1500 });
      const group = signal === 'SIGINT to the group';
      const child = spawn(command, args, { env: { ...process.env, DATABASE_URL: url, STAMPEDE_LOG: 'info' }, stdio: ['ignore', 'ignore', 'pipe'], detached: group });
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
      await until(`${how}: the handler started`, async () => (await db.query('SELECT 1 FROM test_started WHERE job_id = $1', [job.id])).rowCount === 1, 90_000).catch((err) => {
        throw new Error(`${(err as Error).message}; its stderr:\n${stderr}`);
      });
      if (group) process.kill(-child.pid!, 'SIGINT');
      else child.kill('SIGTERM');
      const exit = await exited;
      if (expected === 'exit 0') expect(exit, stderr).toEqual({ code: 0, signal: null });
      await until(`${how}: the worker process gone`, async () => (await workerConnections()) === 0, 30_000);
      const row = await jobRow(db, job.id);
      expect(row.state, stderr).toBe('done');
      expect((await db.query("SELECT count(*)::int AS n FROM stampede.jobs WHERE state = 'claimed'")).rows[0].n).toBe(0);
    }, 150_000);
  }
});
