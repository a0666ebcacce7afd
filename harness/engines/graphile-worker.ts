import pg from 'pg';
import { Db } from '../../engine/db.ts';
import { loadPeer, peerFinalState, peerQueries as q, type PeerRow } from './peer-common.ts';
import { systemClock } from '../../engine/clock.ts';
import type { PeerWorker, PeerWorkerOptions } from './peer-workers.ts';
import { peerInapplicable, peerVersion, peerWorkerProcess } from './peer-run-support.ts';
import type { JobSpec, PeerAdapter } from './types.ts';

/** The exact release package.json pins (the bench's); `STAMPEDE_PEER_PACKAGE` names an npm alias of another (a known-bug control). */
export const GRAPHILE_VERSION = '0.18.0';
const DOCS = 'https://worker.graphile.org/docs';

type GraphileModule = typeof import('graphile-worker');

/** graphile-worker's priority runs the smallest number first; the harness's 9 is its most urgent. */
const toGraphilePriority = (p: number) => -p;

function addJobArgs(j: JobSpec): unknown[] {
  return [j.queue, JSON.stringify(j.payload), j.runAt ?? null, j.delayMs ?? 0, j.maxAttempts, j.key, toGraphilePriority(j.priority)];
}

/**
 * graphile-worker as the harness judges it. Its promises, from its docs: jobs
 * are durable rows; a worker locks the job it runs, and a job locked by a
 * worker that died stays locked for 4 hours before another may take it
 * ("Jobs are locked for 4 hours", docs/faq; no heartbeat); a job that fails
 * every attempt stays in the table with its last_error (no dead-letter
 * queue); priority (smaller first) and run_at are honoured; its cron is
 * per-process with a known-crontabs table (not run by this adapter).
 */
export const graphileAdapter: PeerAdapter = {
  name: 'graphile-worker',
  version: () => peerVersion('graphile-worker'),
  promises: {
    durableEnqueue: true,
    crashRecovery: false,
    releaseOnStop: true,
    heartbeats: false,
    exclusiveClaim: true,
    fencing: false,
    effectOnce: false,
    deadLetters: false,
    crashLoopVerdict: false,
    priorities: true,
    delayedJobs: true,
    cronOccurrenceKeys: false,
    stampedeObservability: false,
    source: {
      crashRecovery: `${DOCS}/faq: a crashed worker's jobs stay locked for 4 hours`,
      heartbeats: `${DOCS}/faq: no heartbeat; the lock lasts 4 hours`,
      fencing: `${DOCS}: completion is by job id and worker id, nothing fences a stale holder after the 4-hour unlock`,
      effectOnce: `${DOCS}/tasks: at-least-once; a task must be idempotent`,
      deadLetters: `${DOCS}/jobs: a job out of attempts stays in the jobs table with last_error`,
      crashLoopVerdict: `${DOCS}: no crash-loop detection`,
      cronOccurrenceKeys: 'this adapter does not run graphile-worker cron yet',
      stampedeObservability: "stampede's metrics, sampler and alert rules",
    },
  },
  inapplicable: (s) => peerInapplicable('graphile-worker', s),

  async migrate(url, s) {
    const gw = await loadPeer<GraphileModule>('graphile-worker', GRAPHILE_VERSION);
    await gw.runMigrations({ connectionString: url, logger: await quietLogger(gw) });
    const from = s.peerSettings?.['graphile-worker']?.jobIdsFrom;
    if (from === undefined) return;
    const db = new Db({ connectionString: url, maxConnections: 1, applicationName: 'stampede:harness' });
    try {
      await db.query(q.GraphileJobIdsFrom, [from]);
    } finally {
      await db.close();
    }
  },

  async producer(_url, db) {
    return {
      async enqueue(j) {
        const row = (await db.query(q.GraphileAddJob, addJobArgs(j))).rows[0];
        return { jobId: historyId(j), runAtMs: row.run_at_ms };
      },
      async enqueueBatch(jobs) {
        // As the one-statement batch before it: a batch's jobs are due at their runAt, or now() (no delayMs).
        const specs = jobs.map((j) => ({ identifier: j.queue, payload: j.payload, run_at: j.runAt ?? null, max_attempts: j.maxAttempts, job_key: j.key, priority: toGraphilePriority(j.priority) }));
        // add_jobs answers its rows in no promised order: each job's run_at is found by its key.
        const runAt = new Map((await db.query(q.GraphileAddJobs, [JSON.stringify(specs)])).rows.map((r) => [r.key, r.run_at_ms]));
        return jobs.map((j) => ({ jobId: historyId(j), runAtMs: runAt.get(j.key) }));
      },
      close: async () => {},
    };
  },

  workerProcess: (s, slot, gen) => peerWorkerProcess('graphile-worker', s, slot, gen),

  async unfinished(db: Db) {
    const r = (await db.query(q.GraphileUnfinished)).rows[0];
    return { n: r.n, dbNow: r.db_now };
  },

  async sample(db) {
    const rows = (await db.query(q.GraphileSample)).rows;
    return {
      depthByQueue: Object.fromEntries(rows.map((r) => [r.queue, r.due])),
      oldestUnclaimedAgeMs: Object.fromEntries(rows.map((r) => [r.queue, r.oldest_ms])),
    };
  },

  async readFinalState(db) {
    const rows: PeerRow[] = (await db.query(q.GraphileJobs)).rows.map((r) => ({
      key: r.key,
      queue: r.queue,
      priority: -r.priority,
      state: r.locked ? 'claimed' : r.attempts >= r.max_attempts ? 'dead' : r.attempts > 0 ? 'failed' : 'pending',
      attempts: r.attempts,
      maxAttempts: r.max_attempts,
      runAtMs: r.run_at_ms,
      notDueYet: r.not_due_yet,
    }));
    return peerFinalState(db, rows, []);
  },
};

function historyId(j: JobSpec): number {
  return (j.payload as { hid: number }).hid;
}

/** graphile-worker logs every job at info: only its errors reach the harness's stderr. */
async function quietLogger(gw: GraphileModule) {
  return new gw.Logger(() => (level: string, message: string) => {
    if (level === 'error') process.stderr.write(`graphile-worker: ${message}\n`);
  });
}

/** Inside a worker process: graphile-worker's runner, one task per harness queue. */
export async function startGraphileWorker(o: PeerWorkerOptions): Promise<PeerWorker> {
  const gw = await loadPeer<GraphileModule>('graphile-worker', GRAPHILE_VERSION);
  const taskList = Object.fromEntries(
    o.queues.map((queue) => [
      queue,
      async (payload: unknown, helpers: { job: { attempts: number; priority: number; run_at: Date | string } }) =>
        o.run({ payload: payload as Record<string, unknown>, attempt: helpers.job.attempts, queue, priority: -helpers.job.priority, runAtMs: new Date(helpers.job.run_at).getTime() }),
    ]),
  );
  // The worker pool (runTaskList) over a pool of our own, as graphile-worker's docs allow: its graceful and forceful
  // shutdowns are the pool's, and we end the pg pool once the shutdown has resolved, as its own run() does with the
  // pool it made (runner.stop, then release: pgPool.end()). Nothing later is documented to await: a job that finished
  // during the graceful shutdown may still have its completion waiting for a connection then, and pg's end() drops
  // it (docs/peers.md, "graphile-worker's graceful shutdown resolves before its last completion is written").
  const pgPool = new pg.Pool({ connectionString: o.url, max: o.concurrency + 2 });
  // graphile-worker's docs ("If you use pgPool, ensure it has error handlers!"): a checked-out client whose link is
  // reset emits 'error' with nobody listening, which kills the process; its query reports the error instead.
  pgPool.on('error', () => {});
  pgPool.on('connect', (client) => void client.on('error', () => {}));
  const workerPool = gw.runTaskList({ concurrency: o.concurrency, noHandleSignals: true, pollInterval: 100, logger: await quietLogger(gw) }, taskList, pgPool);
  return {
    // As a deploy meets graphile-worker: its graceful shutdown, and past the grace its forceful one, whose
    // failJobs releases the jobs still running (rejecting when that release failed).
    async stop(graceMs, graceOver) {
      const grace = new AbortController();
      const drained = Promise.resolve(workerPool.gracefulShutdown('SIGTERM')).then(
        () => true,
        () => true,
      );
      const finished = await Promise.race([drained, systemClock.sleep(graceMs, grace.signal).then(() => false, () => true)]);
      grace.abort();
      try {
        if (finished) return;
        graceOver();
        await workerPool.forcefulShutdown(`the harness's ${graceMs} ms grace ran out`);
      } finally {
        await pgPool.end();
      }
    },
  };
}
