import type { Db } from '../../engine/db.ts';
import { harnessQueries } from '../runner/queries.ts';
import { loadPeer, peerFinalState, peerQueries as q, type PeerRow } from './peer-common.ts';
import { systemClock } from '../../engine/clock.ts';
import type { PeerWorker, PeerWorkerOptions } from './peer-workers.ts';
import { peerInapplicable, peerVersion, peerWorkerProcess } from './peer-run-support.ts';
import type { PeerSettings } from '../scenario.ts';
import type { JobSpec, PeerAdapter } from './types.ts';

export const PGBOSS_VERSION = '12.38.0';
const DOCS = 'https://timgit.github.io/pg-boss';
/**
 * How long a job may be active before pg-boss's supervisor fails it and retries it (its `expireInSeconds`):
 * its docs ask for more than the longest job, and the harness's longest (a slow job) takes 4 s.
 */
export const PGBOSS_EXPIRE_S = 5;
/**
 * How often the supervisor runs (`superviseIntervalSeconds`) and how often a pass may expire a
 * queue's jobs (`monitorIntervalSeconds`): both at their minimum, 1 s, since the harness's runs are
 * seconds long. Both are needed: a pass expires jobs only for the queues whose monitor claim is due
 * (pg-boss 12.38.0 dist/boss.js:329-405, the `trySetQueueMonitorTime` gate in dist/plans.js:1360),
 * and the monitor interval defaults to 60 s (dist/attorney.js:669), longer than a run's drain.
 */
const SUPERVISE_S = 1;
/** A queue's dead-letter queue: failed jobs are copied there. */
const deadLetterOf = (queue: string) => `${queue}__dead`;

type PgBossModule = typeof import('pg-boss');
type Boss = InstanceType<PgBossModule['PgBoss']>;

function newBoss(mod: PgBossModule, url: string, role: 'install' | 'producer' | 'worker'): Boss {
  const b = new mod.PgBoss({
    connectionString: url,
    max: role === 'worker' ? 10 : 4,
    application_name: `pgboss:harness-${role}`,
    migrate: role === 'install',
    // The workers supervise (expire and retry), as a deployment would; the producer and the installer do not.
    supervise: role === 'worker',
    superviseIntervalSeconds: SUPERVISE_S,
    monitorIntervalSeconds: SUPERVISE_S,
    schedule: false,
    // The workers' view of each queue's backlog (readyCount), read by burstWhenReadyExceeds (startPgBossWorker): at its minimum.
    ...(role === 'worker' ? { queueCacheIntervalSeconds: SUPERVISE_S } : {}),
  } as never);
  b.on('error', (err: unknown) => process.stderr.write(`pg-boss ${role}: ${String(err)}\n`));
  return b;
}

/**
 * A job's send options. A scenario's `peerSettings['pg-boss']` replaces the expiry and adds a per-job
 * heartbeat: the known-bug control `peer-heartbeat-kill` (docs/peers.md), where only the heartbeat can
 * bring a killed worker's job back within the drain.
 */
function sendOptions(j: JobSpec, set: PeerSettings['pg-boss']): Record<string, unknown> {
  return {
    priority: j.priority,
    retryLimit: j.maxAttempts - 1,
    expireInSeconds: set?.expireInSeconds ?? PGBOSS_EXPIRE_S,
    ...(set ? { heartbeatSeconds: set.heartbeatSeconds } : {}),
    ...(j.runAt ? { startAfter: j.runAt } : j.delayMs ? { startAfter: Math.ceil(j.delayMs / 1000) } : {}),
  };
}

const historyId = (j: JobSpec) => (j.payload as { hid: number }).hid;

/**
 * pg-boss as the harness judges it. Its promises, from its docs: durable
 * jobs; "exactly-once job delivery" while a job is active; an active job
 * expires after `expireInSeconds` and is retried (crash recovery by expiry,
 * run by the supervisor); heartbeats exist from 10 s up (`heartbeatSeconds`,
 * used only by the known-bug control peer-heartbeat-kill: the harness's jobs are shorter); failed jobs go to a
 * queue's `deadLetter`; priority (larger first) and `startAfter` honoured;
 * cron by `schedule()` (not run by this adapter).
 */
export const pgBossAdapter: PeerAdapter = {
  name: 'pg-boss',
  version: () => peerVersion('pg-boss'),
  promises: {
    durableEnqueue: true,
    crashRecovery: true,
    releaseOnStop: true,
    heartbeats: false,
    exclusiveClaim: true,
    fencing: false,
    effectOnce: false,
    deadLetters: true,
    crashLoopVerdict: false,
    priorities: true,
    delayedJobs: true,
    cronOccurrenceKeys: false,
    stampedeObservability: false,
    source: {
      heartbeats: `${DOCS}/api/jobs: heartbeatSeconds must be >= 10 s, longer than the harness's jobs; used only by the control peer-heartbeat-kill`,
      fencing: `${DOCS}/api/jobs: an expired job is retried; its first handler is aborted by its signal, its writes are not fenced`,
      effectOnce: `${DOCS}: handlers must be idempotent (at-least-once after expiry or retry)`,
      crashLoopVerdict: `${DOCS}: no crash-loop detection; a poison job uses its retries`,
      cronOccurrenceKeys: 'this adapter does not run pg-boss schedule() yet',
      stampedeObservability: "stampede's metrics, sampler and alert rules",
    },
  },
  inapplicable: (s) => peerInapplicable('pg-boss', s),

  async migrate(url, s) {
    const mod = await loadPeer<PgBossModule>('pg-boss', PGBOSS_VERSION);
    const b = newBoss(mod, url, 'install');
    await b.start();
    for (const { queue } of s.lanes) {
      await b.createQueue(deadLetterOf(queue));
      await b.createQueue(queue, { deadLetter: deadLetterOf(queue) } as never);
    }
    await b.stop({ graceful: false } as never);
  },

  async producer(url, db, s) {
    const set = s.peerSettings?.['pg-boss'];
    const mod = await loadPeer<PgBossModule>('pg-boss', PGBOSS_VERSION);
    const b = newBoss(mod, url, 'producer');
    await b.start();
    const runAtOf = async (ids: (string | null)[]) =>
      new Map((await db.query(q.PgBossRunAt, [ids])).rows.map((r) => [r.id, r.ms]));
    return {
      async enqueue(j) {
        const id = await b.send(j.queue, j.payload, sendOptions(j, set) as never);
        if (!id) throw new Error(`pg-boss refused the job ${j.key} (send answered null)`);
        return { jobId: historyId(j), runAtMs: (await runAtOf([id])).get(id)! };
      },
      async enqueueBatch(jobs) {
        const ids = await b.insert(jobs[0].queue, jobs.map((j) => ({ data: j.payload, ...sendOptions(j, set) })) as never);
        const at = await runAtOf(ids ?? []);
        const dbNow = ((await db.query(harnessQueries.DbNow)).rows[0].now as Date).getTime();
        return jobs.map((j, i) => ({ jobId: historyId(j), runAtMs: at.get(ids?.[i] ?? '') ?? dbNow }));
      },
      close: () => b.stop({ graceful: false } as never),
    };
  },

  workerProcess: (s, slot, gen) => peerWorkerProcess('pg-boss', s, slot, gen),

  async unfinished(db: Db) {
    const r = (await db.query(q.PgBossUnfinished, [await harnessQueues(db)])).rows[0];
    return { n: r.n, dbNow: r.db_now };
  },

  async sample(db) {
    const rows = (await db.query(q.PgBossSample, [await harnessQueues(db)])).rows;
    return {
      depthByQueue: Object.fromEntries(rows.map((r) => [r.queue, r.due])),
      oldestUnclaimedAgeMs: Object.fromEntries(rows.map((r) => [r.queue, r.oldest_ms])),
    };
  },

  async readFinalState(db) {
    const queues = await harnessQueues(db);
    const state = (s: string): PeerRow['state'] =>
      s === 'completed' ? 'done' : s === 'failed' || s === 'cancelled' ? 'dead' : s === 'active' ? 'claimed' : s === 'retry' ? 'failed' : 'pending';
    const rows: PeerRow[] = (await db.query(q.PgBossJobs, [queues])).rows.map((r) => ({
      key: r.key,
      queue: r.queue,
      priority: r.priority,
      state: state(r.state),
      attempts: r.retry_count + (r.state === 'created' ? 0 : 1),
      maxAttempts: r.retry_limit + 1,
      runAtMs: r.run_at_ms,
      notDueYet: r.not_due_yet,
    }));
    const dead = (await db.query(q.PgBossDeadLetters, [queues.map(deadLetterOf)])).rows.map((r) => r.key as string);
    return peerFinalState(db, rows, dead);
  },
};

/** The harness's queues: every pg-boss queue that is not a dead-letter queue. */
async function harnessQueues(db: Db): Promise<string[]> {
  return (await db.query(q.PgBossQueues)).rows.map((r) => r.name);
}

/** Inside a worker process: a pg-boss instance that supervises, and one work() per harness queue. */
export async function startPgBossWorker(o: PeerWorkerOptions): Promise<PeerWorker> {
  const mod = await loadPeer<PgBossModule>('pg-boss', PGBOSS_VERSION);
  const b = newBoss(mod, o.url, 'worker');
  await b.start();
  for (const queue of o.queues) {
    // Each slot fetches once per polling interval (0.5 s, pg-boss's minimum): 2 jobs a second a slot. With a backlog
    // (more than one job ready) pg-boss's documented burst mode fetches again at once (burstWhenReadyExceeds,
    // pg-boss 12.38.0 dist/types.d.ts JobPollingOptions); without it a 3,000-job herd outlasted the run
    // (peer-poison-herd, docs/peers.md).
    const polling = { pollingIntervalSeconds: 0.5, burstWhenReadyExceeds: 1 };
    await b.work(queue, { batchSize: 1, ...polling, localConcurrency: o.concurrency, includeMetadata: true } as never, (async (jobs: any[]) => {
      const job = jobs[0];
      await o.run({ payload: job.data, attempt: job.retryCount + 1, queue, priority: job.priority, runAtMs: new Date(job.startAfter).getTime() });
    }) as never);
  }
  return {
    // pg-boss's graceful stop waits `timeout` (1 s at least) for its handlers, then fails the jobs still active (failWip).
    async stop(graceMs, graceOver) {
      const over = new AbortController();
      void systemClock.sleep(graceMs, over.signal).then(graceOver, () => {});
      try {
        await b.stop({ graceful: true, wait: true, timeout: Math.max(1_000, graceMs) } as never);
      } finally {
        over.abort();
      }
    },
  };
}
