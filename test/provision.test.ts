import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { Db } from '../engine/db.ts';
import { enqueue, enqueueMany } from '../engine/enqueue.ts';
import { createLogger } from '../engine/log.ts';
import { migrate } from '../engine/migrator.ts';
import { Worker } from '../engine/worker/worker.ts';
import { SeededRng } from '../engine/rng.ts';
import { systemClock } from '../engine/clock.ts';
import { EmbeddedPostgres } from '../harness/postgres/embedded.ts';
import { createDatabase } from '../harness/postgres/databases.ts';
import { countByState } from './support/jobs.ts';
import { until } from './support/wait.ts';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Runs the hold-postgres fixture, waits for its server, and returns its pid, dir and process. */
async function holdPostgres(paused = false) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/hold-postgres.ts'], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, DATABASE_URL: '', STAMPEDE_LOG: 'silent', STAMPEDE_TEST_PAUSE: paused ? '1' : '0' },
  });
  let out = '';
  const info = await new Promise<{ pid: number; dir: string; stopped: number[] }>((resolve, reject) => {
    child.stdout.on('data', (c) => {
      out += c;
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]));
    });
    child.once('exit', (code) => reject(new Error(`fixture exited ${code} before the server was up`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { ...info, child, exited };
}

describe('the embedded server leaves nothing behind', () => {
  it('on Ctrl-C (SIGINT): the postgres process and the temp dir are gone', async () => {
    const held = await holdPostgres();
    expect(alive(held.pid)).toBe(true);
    expect(existsSync(held.dir)).toBe(true);
    held.child.kill('SIGINT');
    expect(await held.exited).toBe(130);
    expect(alive(held.pid)).toBe(false);
    expect(existsSync(held.dir)).toBe(false);
  });

  // A db-pause fault SIGSTOPs every server process; an interrupted run must not leave them stopped.
  it('paused (every process SIGSTOPped), on Ctrl-C and on SIGKILL of its owner: every process is gone', async () => {
    for (const signal of ['SIGINT', 'SIGKILL'] as const) {
      const held = await holdPostgres(true);
      expect(held.stopped.length).toBeGreaterThan(1);
      held.child.kill(signal);
      await held.exited;
      for (const pid of held.stopped) await until(`postgres process ${pid} gone after ${signal}`, () => !alive(pid), 15_000);
      await until('dir removed', () => !existsSync(held.dir), 15_000);
    }
  });

  it('on SIGKILL of its owner: the reaper stops postgres and removes the dir', async () => {
    const held = await holdPostgres();
    held.child.kill('SIGKILL');
    await held.exited;
    await until('postgres gone', () => !alive(held.pid), 15_000);
    await until('dir removed', () => !existsSync(held.dir), 15_000);
  });
});

describe('durability across a Postgres crash', () => {
  const server = new EmbeddedPostgres({ log: createLogger('test', 'warn') });
  let db: Db;
  afterAll(async () => {
    await db?.close();
    await server.stop();
  });

  it('an acknowledged enqueue survives kill -9 of the server and a restart', async () => {
    await server.start();
    const url = await createDatabase(server.adminUrl, 'durable');
    db = new Db({ connectionString: url, maxConnections: 6, applicationName: 'durable' });
    await migrate(db);
    const job = await enqueue(db, 'durable', { important: true });
    await server.crash();
    await server.restart();
    const row = await until('server back', () =>
      db.query('SELECT payload FROM stampede.jobs WHERE id = $1', [job.id]).then((r) => r.rows[0], () => null),
    );
    expect(row.payload).toEqual({ important: true });
  });

  it('with its WAL writer stalled, a crash loses the commits that did not wait for their WAL flush, and keeps those that did', async () => {
    // The harness's power cut (db-restart's lull): a SIGKILL alone keeps what the WAL writer handed the kernel.
    await db.query('CREATE TABLE acknowledged (id int PRIMARY KEY, waited boolean NOT NULL)');
    expect(server.stallWalWriter()).toBeGreaterThan(0);
    const commit = (id: number, waited: boolean) =>
      db.transaction(async (tx) => {
        if (!waited) await tx.query('SET LOCAL synchronous_commit = off');
        await tx.query('INSERT INTO acknowledged VALUES ($1, $2)', [id, waited]);
      });
    await commit(1, true);
    await commit(2, false);
    await commit(3, false);
    expect((await db.query('SELECT count(*)::int AS n FROM acknowledged')).rows[0].n).toBe(3);
    await server.crash();
    await server.restart();
    const rows = await until('server back', () => db.query('SELECT id FROM acknowledged ORDER BY id').then((r) => r.rows, () => null));
    expect(rows).toEqual([{ id: 1 }]);
  });

  it('a running worker rides through a Postgres restart: reconnects, loses no job', async () => {
    await enqueueMany(db, Array.from({ length: 300 }, (_, i) => ({ queue: 'restart', payload: { i } })));
    let completed = 0;
    const worker = new Worker({
      db,
      handlers: { restart: () => systemClock.sleep(5) },
      concurrency: 4,
      pollMs: 50,
      leaseMs: 1500,
      rescueIntervalMs: 100,
      rng: new SeededRng(3),
    });
    worker.events.on('job:completed', () => completed++);
    worker.start();
    try {
      await until('some progress', () => completed > 30);
      await server.crash();
      await server.restart();
      await until('all 300 done', () => countByState(db, 'restart').then((c) => c.done === 300, () => false), 60_000, 200);
    } finally {
      await worker.stop(0);
    }
  });
});
