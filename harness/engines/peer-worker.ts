// A peer engine's worker process (graphile-worker, pg-boss): the engine's own
// worker, started as its docs say, running the harness's handler, which does
// what each kind of job does (harness/handlers.ts) and reports what the
// history needs: the claim and start (at the handler's entry: a peer tells
// its handler nothing earlier), the effect, the completion or failure.
// Flags: --engine NAME --worker-id ID --concurrency N; env DATABASE_URL, STAMPEDE_QUEUES.
import { parseArgs } from 'node:util';
import { systemClock } from '../../engine/clock.ts';
import type { EngineEvents } from '../../engine/events.ts';
import { flushReports, harnessDb, killHere, reportOf, stopHere, type HandlerReports } from '../handlers.ts';
import { harnessQueries } from '../runner/queries.ts';
import { historyIdOf, peerQueries } from './peer-common.ts';
import { PEER_WORKERS, type PeerJob } from './peer-workers.ts';

interface Payload {
  kind?: string;
  key: string;
  params?: { durationMs?: number; failAttempts?: number };
}

type Job = 'jobId' | 'queue' | 'attempt' | 'workerId';
/**
 * What a peer's worker reports: the harness handler's own reports, and of the engine's events the fields a peer
 * tells its handler (no lease token, no database instants: the history holds those optional).
 */
type PeerReports = HandlerReports & {
  'job:claimed': Pick<EngineEvents['job:claimed'], Job | 'priority' | 'runAt'>;
  'job:started': EngineEvents['job:started'];
  'job:failed': Pick<EngineEvents['job:failed'], Job | 'error' | 'retryAt' | 'durationMs'>;
  'job:completed': Omit<EngineEvents['job:completed'], 'leaseToken'>;
  'worker:stopping': EngineEvents['worker:stopping'];
  'worker:error': EngineEvents['worker:error'];
  'lease:released': EngineEvents['lease:released'];
};
const report = <N extends keyof PeerReports>(name: N, payload: PeerReports[N]): void => reportOf<PeerReports, N>(name, payload);

const { values } = parseArgs({ options: { engine: { type: 'string' }, 'worker-id': { type: 'string' }, concurrency: { type: 'string' } } });
const engine = values.engine as keyof typeof PEER_WORKERS;
const workerId = values['worker-id']!;
/** How long a SIGTERM lets the running jobs finish before the peer's forceful path hands them back (the fleet's, for every engine). */
const graceMs = Number(process.env.STAMPEDE_SHUTDOWN_GRACE_MS ?? 2_000);
/** The jobs whose handler runs now, by history id. */
const running = new Map<number, { queue: string; attempt: number }>();
/** Set when a stop's grace ran out: the jobs still running were handed back, and their handlers must not complete them. */
let graceOver = false;

/** One job, start to end, as every peer's handler runs it; throws to fail the attempt. */
async function runJob(job: PeerJob): Promise<void> {
  const p = job.payload as unknown as Payload;
  const jobId = historyIdOf(p.key);
  const base = { jobId, queue: job.queue, attempt: job.attempt, workerId };
  report('job:claimed', { ...base, priority: job.priority, runAt: job.runAtMs });
  report('job:started', base);
  running.set(jobId, { queue: job.queue, attempt: job.attempt });
  try {
    await runHandler(job, p, base);
  } finally {
    running.delete(jobId);
  }
}

/** The handler's work for each kind of job, and its completion or failure. */
async function runHandler(job: PeerJob, p: Payload, base: { jobId: number; queue: string; attempt: number; workerId: string }): Promise<void> {
  const { jobId } = base;
  const at = { jobId, attempt: job.attempt, workerId };
  const began = systemClock.now();
  // As in harness/handlers.ts: a redelivered slow job or effect works half its planned time.
  const ms = (p.params?.durationMs ?? 0) * (job.attempt > 1 && (p.kind === 'slow' || p.kind === 'effect') ? 0.5 : 1);
  try {
    switch (p.kind) {
      case 'poison':
        await flushReports();
        process.kill(process.pid, 'SIGKILL');
        return;
      case 'failing':
        throw new Error(`failing: planned failure on attempt ${job.attempt}`);
      case 'flaky':
        if (job.attempt <= (p.params?.failAttempts ?? 2)) throw new Error(`flaky: planned failure on attempt ${job.attempt}`);
        break;
      case 'effect':
        await systemClock.sleep(ms / 2);
        killHere('mid-handler', at);
        report('effect:started', { jobId, attempt: job.attempt, workerId });
        // A peer has no transaction of its own around the handler: the effect commits on its own, as it would in a user's handler.
        await harnessDb().query(harnessQueries.RecordEffect, [p.key, jobId, workerId]);
        report('effect:applied', { jobId, key: p.key, workerId });
        await systemClock.sleep(ms / 2);
        killHere('after-effect', at);
        break;
      default:
        await systemClock.sleep(ms / 2);
        killHere('mid-handler', at);
        if (p.kind === 'slow') await stopHere('mid-slow-job', at);
        await systemClock.sleep(ms - ms / 2);
        if (p.kind === 'slow') await stopHere('before-report', at);
    }
  } catch (err) {
    report('job:failed', { ...base, error: (err as Error).message, retryAt: 0, durationMs: systemClock.now() - began });
    throw err;
  }
  // Handed back at the grace's end: the job is another run's now, and this process is about to exit.
  if (graceOver) await new Promise(() => {});
  await harnessDb().query(peerQueries.RecordCompletion, [jobId, job.attempt, workerId]);
  report('job:completed', { ...base, durationMs: systemClock.now() - began });
}

const worker = await PEER_WORKERS[engine]({
  url: process.env.DATABASE_URL!,
  queues: (process.env.STAMPEDE_QUEUES ?? 'default').split(','),
  concurrency: Number(values.concurrency ?? 1),
  workerId,
  run: runJob,
});
let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  report('worker:stopping', { workerId });
  let held: [number, { queue: string; attempt: number }][] = [];
  const onGraceOver = () => {
    graceOver = true;
    held = [...running];
    // The evidence that the stop caught jobs running (the worker-restart fault bit), whatever the peer does next.
    for (const [jobId, j] of held) report('fault:bit', { fault: 'worker-restart', point: 'grace-over', jobId, attempt: j.attempt, workerId });
  };
  worker
    .stop(graceMs, onGraceOver)
    .then(
      // The peer's forceful path returned without error: what was still running was handed back.
      () => held.forEach(([jobId, j]) => report('lease:released', { jobId, queue: j.queue, attempt: j.attempt, workerId })),
      (err) => report('worker:error', { workerId, error: `stop: the peer's hand-back failed: ${(err as Error).message}` }),
    )
    // What the stop reported (its last completions, worker:stopping) leaves before the process ends: reports are batched.
    .finally(() => flushReports().then(() => process.exit(0)));
});
process.send?.({ kind: 'ready', pid: process.pid, workerId });
