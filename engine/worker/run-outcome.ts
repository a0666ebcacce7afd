// A run's outcome writes other than the common batched completion (completer.ts): a failure, an uncharged
// hand-back, and the fenced hand-back of a lease that may have expired. Rare, so plain async functions.
import { coerceError, JobTimeoutError } from '../errors.ts';
import type { ClaimedJob } from './claim.ts';
import type { JobRunnerDeps } from './job-runner.ts';
import type { ResolvedQueueOptions } from './options.ts';
import { workerQueries as q } from './queries.ts';
import { writeResult } from './result-write.ts';
import { workerStrategies } from './strategies.ts';
import { reportDbError } from './db-error-report.ts';

/** A job whose effect another holder still has open is retried after 250-500 ms. */
const EFFECT_BUSY_RETRY_MS = 250;

/** What the outcome writes read of a run. */
export interface OutcomeRun {
  readonly job: ClaimedJob;
  readonly deps: JobRunnerDeps;
  readonly options: ResolvedQueueOptions;
  readonly attempt: number;
  /** How long the handler ran, ms (NaN until it settled). */
  readonly durationMs: number;
  /** Why the claim is handed back uncharged instead of its outcome recorded (a busy effect, a database fault); undefined: none. */
  readonly handBackReason: string | undefined;
}

/** A hand-back for a busy effect or a database fault (`handBackReason`), or a failure: written one job at a time. */
export async function writeOutcome(run: OutcomeRun, error: unknown): Promise<void> {
  try {
    if (run.handBackReason !== undefined) await deferBusy(run, run.handBackReason);
    else await recordFailure(run, error, run.durationMs);
  } catch (err) {
    logUnrecorded(run, err);
  }
}

/** The result could not be written: the lease will expire and the job run again. */
export function logUnrecorded(run: OutcomeRun, err: unknown): void {
  run.deps.log.error('could not record job result; the lease will expire and the job rerun', {
    jobId: run.job.id,
    error: (err as Error).message,
  });
}

/**
 * After expire(): hands the claim back uncharged, due at once, if the lease
 * is still this run's when the database hears of it (fenced on the token).
 * It often is: a claim whose answer was held past a whole lease (the
 * partition held the answer, not the request), or answers lost one way
 * while the renewals still landed. Without it the job would sit claimed
 * until its lease ran out and then be rescued, charged an attempt it never
 * ran. Refused (taken over meanwhile): nothing to do, the loss is already
 * reported. Given up after the result-write window: the lease expires.
 */
export async function handBackExpired(run: OutcomeRun): Promise<void> {
  const { job, deps } = run;
  try {
    const res = await writeResult(() => workerStrategies.releaseExpired(deps.db, job.id, job.leaseToken), {
      clock: deps.clock,
      log: deps.log,
      what: 'hand-back of an expired lease',
      onError: (err) => reportDbError(deps, err, 'result'),
    });
    if (res.rows[0]) deferred(run, 'no renewal landed for a whole lease; handed back uncharged', res.rows[0]);
  } catch (err) {
    deps.log.warn('could not hand back a job whose lease may have expired; it will be rescued', { jobId: job.id, error: (err as Error).message });
  }
}

/**
 * Hands the claim back without charging the attempt, for a retry shortly:
 * the effect's other holder ends (commits, is fenced out, or dies and rolls
 * back) in the meantime. Waiting on it instead would hold this job's claim
 * for as long as that holder stays frozen.
 */
async function deferBusy(run: OutcomeRun, reason: string): Promise<void> {
  const { job, deps } = run;
  const delayMs = EFFECT_BUSY_RETRY_MS + deps.rng.int(0, EFFECT_BUSY_RETRY_MS);
  const row = await writeFenced(run, 'hand-back write', q.DeferJob, [job.id, job.leaseToken, delayMs]);
  if (row) deferred(run, reason, row);
}

/** The claim was handed back uncharged (DeferJob's row): `job:deferred`. */
function deferred(run: OutcomeRun, reason: string, row: Record<string, any>): void {
  const { job, deps } = run;
  deps.events.emit('job:deferred', { jobId: job.id, queue: job.queue, attempt: run.attempt, workerId: deps.workerId, reason, retryAt: (row.run_at as Date).getTime() });
}

async function recordFailure(run: OutcomeRun, thrown: unknown, durationMs: number): Promise<void> {
  const { job, deps } = run;
  const err = coerceError(thrown);
  const message = `${err.name}: ${err.message}`;
  const backoff = { baseMs: run.options.backoffBaseMs, capMs: run.options.backoffCapMs };
  const delayMs = workerStrategies.retryDelayMs(run.attempt, backoff, deps.rng);
  const kind = thrown instanceof JobTimeoutError ? 'timeout' : 'error';
  const row = await writeFenced(run, 'failure write', q.FailJob, [job.id, job.leaseToken, message, delayMs, kind]);
  if (!row) return;
  deps.events.emit('job:failed', {
    jobId: job.id,
    queue: job.queue,
    attempt: run.attempt,
    maxAttempts: job.maxAttempts,
    workerId: deps.workerId,
    durationMs,
    error: message,
    dbFailedAt: (row.failed_at as Date).getTime(),
    retryAt: (row.run_at as Date).getTime(),
  });
  if (row.state === 'dead') {
    deps.events.emit('job:dead', { jobId: job.id, queue: job.queue, attempt: row.attempts, code: row.dead_code, reason: row.dead_reason });
  }
}

/**
 * A result write fenced on the lease token, retried through a lost
 * connection (one that never reached the database would leave a live
 * worker's job to its lease expiry, rerun for nothing). Returns its row, or
 * undefined when the fence refused it (`lease:lost`).
 */
async function writeFenced(run: OutcomeRun, what: string, query: string, params: unknown[]): Promise<Record<string, any> | undefined> {
  const { job, deps } = run;
  const res = await writeResult(() => deps.db.query(query, params), { clock: deps.clock, log: deps.log, what, onError: (err) => reportDbError(deps, err, 'result') });
  const row = res.rows[0];
  if (!row) deps.events.emit('lease:lost', { jobId: job.id, queue: job.queue, attempt: run.attempt, workerId: deps.workerId, phase: 'fail', handlerMs: run.durationMs, leaseToken: job.leaseToken });
  return row;
}
