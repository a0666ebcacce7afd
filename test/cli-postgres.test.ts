// `stampede-queue postgres`, as a library user with no Postgres runs it: the compiled command prints one
// DATABASE_URL line on stdout, pg connects with it, and Ctrl-C (SIGINT) or SIGTERM leaves no postgres process and no
// temp dir; with --data-dir the data outlives it and the next start reuses it.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { compiledEntry } from '../engine/supervisor/compiled-entry.ts';
import { until } from './support/wait.ts';

/** Pids of the processes whose command line mentions `text` (Linux /proc). */
function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false; // exited while we looked
      }
    })
    .map(Number);
}

/** A private TMPDIR for one run, so what the command leaves there can be counted. */
function privateTmp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'stampede-pgcli-'));
  // As root the server runs as the postgres OS user, which must reach its sockets in here.
  chmodSync(dir, 0o755);
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts the command; resolves once it printed its URL. */
async function startPostgres(tmp: string, args: string[] = []) {
  const child = spawn(process.execPath, [compiledEntry('bin/stampede.ts'), 'postgres', '--port', '0', ...args], {
    env: { ...process.env, TMPDIR: tmp, STAMPEDE_LOG: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onTestFinished(() => void child.kill('SIGKILL'));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = await until<string>('the DATABASE_URL line', () => /^DATABASE_URL=(\S+)\n/.exec(stdout)?.[1] ?? '', 60_000).catch((err) => {
    throw new Error(`${(err as Error).message}; its stderr:\n${stderr}`);
  });
  return { child, url, exited, stdout: () => stdout, stderr: () => stderr };
}

async function query(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

describe('stampede-queue postgres', () => {
  it('prints one DATABASE_URL line that pg connects with; Ctrl-C stops it, leaving no process and no temp dir', async () => {
    const tmp = privateTmp();
    const pgCli = await startPostgres(tmp);
    expect(pgCli.stdout()).toMatch(/^DATABASE_URL=postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres\n$/);
    expect((await query(pgCli.url, 'SHOW server_version_num')).rows[0].server_version_num).toMatch(/^18/);
    expect(processesMentioning(tmp).length).toBeGreaterThan(0); // the server and its reaper run from the temp dir
    pgCli.child.kill('SIGINT');
    expect(await pgCli.exited).toEqual({ code: 0, signal: null });
    expect(readdirSync(tmp)).toEqual([]);
    await until('no process of the server or its reaper left', () => processesMentioning(tmp).length === 0, 10_000);
    await expect(query(pgCli.url, 'SELECT 1')).rejects.toThrow(/ECONNREFUSED/);
  }, 120_000);

  it('--data-dir keeps the data across a SIGTERM and a second start', async () => {
    const tmp = privateTmp();
    const dataDir = join(tmp, 'pgdata');
    const first = await startPostgres(tmp, ['--data-dir', dataDir]);
    await query(first.url, 'CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)');
    first.child.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
    expect(readdirSync(tmp)).toEqual(['pgdata']); // the temp dir is gone, the data stays

    const second = await startPostgres(tmp, ['--data-dir', dataDir]);
    expect((await query(second.url, 'SELECT n FROM kept')).rows).toEqual([{ n: 42 }]);
    second.child.kill('SIGINT');
    expect(await second.exited).toEqual({ code: 0, signal: null });
    await until('no process of the server or its reaper left', () => processesMentioning(tmp).length === 0, 10_000);
  }, 120_000);

  it('a bad --port is refused with exit 2, naming the flag', async () => {
    const child = spawn(process.execPath, [compiledEntry('bin/stampede.ts'), 'postgres', '--port', '70000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('--port: expected 0-65535, got "70000"');
  });
});
