import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { compiledEntry } from '../engine/supervisor/compiled-entry.ts';
import { freshDatabase } from './support/db.ts';
import { until } from './support/wait.ts';

const { db, url } = await freshDatabase();

function archiver(args: string[]) {
  const child = spawn(process.execPath, [compiledEntry('bin/stampede.ts'), 'archiver', ...args], {
    env: { ...process.env, DATABASE_URL: url, STAMPEDE_LOG: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, stderr: () => stderr };
}

describe('npm run archiver', () => {
  it('moves old done jobs into the day-partitioned history, and stops cleanly on SIGTERM', async () => {
    await db.query(`
      INSERT INTO stampede.jobs (queue, state, run_at, finished_at, attempts)
      SELECT 'old', 'done', now() - interval '3 hours', now() - interval '2 hours', 1 FROM generate_series(1, 500)`);
    await db.query("INSERT INTO stampede.jobs (queue) VALUES ('still-pending')");
    const a = archiver(['--archive-after-ms', '3600000', '--interval-ms', '200']);
    const moved = await until('archived', async () => {
      const n = (await db.query('SELECT count(*)::int AS n FROM stampede.job_history')).rows[0].n;
      return n === 500 && n;
    });
    expect(moved).toBe(500);
    const left = (await db.query('SELECT queue, state::text FROM stampede.jobs')).rows;
    expect(left).toEqual([{ queue: 'still-pending', state: 'pending' }]);
    a.child.kill('SIGTERM');
    expect(await a.exited).toBe(0);
  });

  it('refuses a bad flag, naming it, with exit code 2', async () => {
    const a = archiver(['--retention-days', 'forever']);
    expect(await a.exited).toBe(2);
    expect(a.stderr()).toContain('--retention-days: expected a positive integer, got "forever"');
  });
});
