import { PgBoss } from 'pg-boss';
import { benchQueries as q } from '../queries.ts';
import { BENCH_QUEUE, type BenchJob, type SystemFamily } from './types.ts';
import { packageVersion } from './util.ts';

/**
 * pg-boss 12. Settings: `batchSize` (jobs per fetch), `notify` (the queue's
 * LISTEN/NOTIFY wake-up, with the instance's useListenNotify),
 * `pollingIntervalSeconds` (its minimum is 0.5), `burstWhenBatchFull`
 * (fetch again at once while fetches come back full; without it a batch
 * worker takes one batch per polling interval).
 *
 * pg-boss 12 declares engines.node >= 22.12; the bench runs it on this
 * machine's Node (20) and it works for everything measured here.
 */
function boss(url: string, settings: Record<string, unknown>, max: number, role: 'install' | 'producer' | 'worker'): PgBoss {
  const b = new PgBoss({
    connectionString: url,
    max,
    application_name: `pgboss:bench-${role}`,
    // Only the installer migrates; nobody runs the maintenance and cron loops, which would compete with the measured work.
    migrate: role === 'install',
    supervise: false,
    schedule: false,
    useListenNotify: Boolean(settings.notify) && role === 'worker',
  } as any);
  b.on('error', (err: unknown) => process.stderr.write(`pg-boss ${role}: ${String(err)}\n`));
  return b;
}

export const pgBossFamily: SystemFamily = {
  name: 'pg-boss',
  version: () => packageVersion('pg-boss'),

  async install(url, settings) {
    const b = boss(url, settings, 2, 'install');
    await b.start();
    await b.createQueue(BENCH_QUEUE, { notify: Boolean(settings.notify) } as any);
    await b.stop({ graceful: false } as any);
  },

  async producer(url, settings, poolSize) {
    const b = boss(url, settings, poolSize, 'producer');
    await b.start();
    return {
      enqueueOne: async (job) => void (await b.send(BENCH_QUEUE, job)),
      enqueueBatch: async (jobs) => void (await b.insert(BENCH_QUEUE, jobs.map((data) => ({ data })))),
      close: () => b.stop({ graceful: false } as any),
    };
  },

  async worker(url, settings, onJob) {
    const b = boss(url, settings, 10, 'worker');
    await b.start();
    return {
      async start() {
        await b.work(
          BENCH_QUEUE,
          {
            batchSize: settings.batchSize ?? 1,
            pollingIntervalSeconds: settings.pollingIntervalSeconds,
            burstWhenBatchFull: settings.burstWhenBatchFull,
          } as any,
          async (jobs: { data: BenchJob }[]) => {
            for (const job of jobs) onJob(job.data);
          },
        );
      },
      async stop() {
        await b.stop({ graceful: true, wait: true, timeout: 10_000 } as any);
      },
    };
  },

  hotTable: 'pgboss.job',

  async remaining(client) {
    return (await client.query<{ n: number }>(q.RemainingPgBoss, [BENCH_QUEUE])).rows[0].n;
  },
};
