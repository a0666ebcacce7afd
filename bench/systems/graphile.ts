import pg from 'pg';
import { makeWorkerUtils, run, runMigrations, type Runner } from 'graphile-worker';
import { benchQueries as q } from '../queries.ts';
import { BENCH_QUEUE, type BenchJob, type SystemFamily } from './types.ts';
import { packageVersion, warm } from './util.ts';

// graphile-worker logs every job at info; at 20,000 jobs that is the bench
// measuring its own stderr. Errors still reach us.
const quietLogger = async () => {
  const { Logger } = await import('graphile-worker');
  return new Logger(() => (level: string, message: string) => {
    if (level === 'error') process.stderr.write(`graphile-worker: ${message}\n`);
  });
};

/**
 * graphile-worker. Settings: `concurrency` (its default is 1), `pollInterval`
 * (ms, default 2000), `maxPoolSize`, and the batching options of its
 * performance page (https://worker.graphile.org/docs/performance):
 * `localQueueSize`, `completeJobBatchDelay`, `failJobBatchDelay`.
 */
export const graphileFamily: SystemFamily = {
  name: 'graphile-worker',
  version: () => packageVersion('graphile-worker'),

  async install(url) {
    await runMigrations({ connectionString: url, logger: await quietLogger() });
  },

  async producer(url, _settings, poolSize) {
    const pool = new pg.Pool({ connectionString: url, max: poolSize, application_name: 'graphile:bench-producer' });
    pool.on('error', () => {});
    pool.on('connect', (c) => c.on('error', () => {}));
    await warm(pool, poolSize);
    const utils = await makeWorkerUtils({ pgPool: pool, logger: await quietLogger() });
    return {
      enqueueOne: async (job) => void (await utils.addJob(BENCH_QUEUE, job)),
      enqueueBatch: async (jobs) => void (await utils.addJobs(jobs.map((payload) => ({ identifier: BENCH_QUEUE, payload })))),
      async close() {
        await utils.release();
        await pool.end();
      },
    };
  },

  async worker(url, settings, onJob) {
    const concurrency = Number(settings.concurrency ?? 1);
    const maxPoolSize = Number(settings.maxPoolSize ?? 10);
    const pool = new pg.Pool({ connectionString: url, max: maxPoolSize, application_name: 'graphile:bench-worker' });
    pool.on('error', () => {});
    pool.on('connect', (c) => c.on('error', () => {}));
    await warm(pool, Math.min(2, maxPoolSize));
    const logger = await quietLogger();
    let runner: Runner | undefined;
    const batching: Record<string, unknown> = {};
    if (settings.localQueueSize !== undefined) batching.localQueue = { size: settings.localQueueSize };
    if (settings.completeJobBatchDelay !== undefined) batching.completeJobBatchDelay = settings.completeJobBatchDelay;
    if (settings.failJobBatchDelay !== undefined) batching.failJobBatchDelay = settings.failJobBatchDelay;
    return {
      async start() {
        runner = await run({
          pgPool: pool,
          concurrency,
          noHandleSignals: true,
          pollInterval: settings.pollInterval as number | undefined,
          logger,
          taskList: { [BENCH_QUEUE]: async (payload) => void onJob(payload as BenchJob) },
          preset: { worker: batching },
        });
      },
      async stop() {
        await runner?.stop();
        await pool.end();
      },
    };
  },

  hotTable: 'graphile_worker._private_jobs',

  async remaining(client) {
    return (await client.query<{ n: number }>(q.RemainingGraphile)).rows[0].n;
  },
};
