import pg from 'pg';
import { Db } from '../../engine/db.ts';
import { enqueue, enqueueMany } from '../../engine/enqueue.ts';
import { createLogger } from '../../engine/log.ts';
import { migrate } from '../../engine/migrator.ts';
import { SeededRng } from '../../engine/rng.ts';
import { Worker } from '../../engine/worker/worker.ts';
import { benchQueries as q } from '../queries.ts';
import { BENCH_QUEUE, type BenchJob, type SystemFamily } from './types.ts';
import { warm } from './util.ts';

/**
 * stampede as the bench runs it: the real Worker with leases, heartbeats,
 * fencing, attempt accounting and the lease rescuer all on (nothing switched
 * off to look fast). Settings: `concurrency`, `claimAhead`, `pollMs`, `leaseMs`, `heartbeatMs`, and for
 * install `dropIndexes` (names in schema stampede: an older schema, the before of an index's cost).
 */
export const stampedeFamily: SystemFamily = {
  name: 'stampede',
  version: () => 'workspace',

  async install(url, settings) {
    const db = new Db({ connectionString: url, maxConnections: 1, applicationName: 'stampede:bench' });
    try {
      await migrate(db);
      for (const index of (settings.dropIndexes as string[] | undefined) ?? []) await db.query(`DROP INDEX stampede.${pg.escapeIdentifier(index)}`);
    } finally {
      await db.close();
    }
  },

  async producer(url, _settings, poolSize) {
    const db = new Db({ connectionString: url, maxConnections: poolSize, applicationName: 'stampede:bench-producer' });
    await warm(db.pool, poolSize);
    return {
      enqueueOne: async (job) => void (await enqueue(db, BENCH_QUEUE, job)),
      enqueueBatch: async (jobs) => void (await enqueueMany(db, jobs.map((payload) => ({ queue: BENCH_QUEUE, payload })))),
      close: () => db.close(),
    };
  },

  async worker(url, settings, onJob) {
    const concurrency = Number(settings.concurrency ?? 10);
    const db = new Db({ connectionString: url, maxConnections: concurrency + 4, applicationName: 'stampede:bench-worker' });
    await warm(db.pool, 2);
    const worker = new Worker({
      db,
      handlers: { [BENCH_QUEUE]: (payload: BenchJob) => onJob(payload) },
      concurrency,
      claimAhead: settings.claimAhead as number | undefined,
      pollMs: settings.pollMs as number | undefined,
      leaseMs: settings.leaseMs as number | undefined,
      heartbeatMs: settings.heartbeatMs as number | undefined,
      rng: new SeededRng(`bench/${process.pid}`),
      log: createLogger('bench-worker', 'warn'),
    });
    return {
      async start() {
        const listening = worker.events.waitFor('worker:listening');
        worker.start();
        await listening;
      },
      async stop() {
        await worker.stop();
        await db.close();
      },
    };
  },

  hotTable: 'stampede.jobs',

  async remaining(client) {
    return (await client.query<{ n: number }>(q.RemainingStampede)).rows[0].n;
  },
};
