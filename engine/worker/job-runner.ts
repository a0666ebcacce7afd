import type { Clock } from '../clock.ts';
import type { Db } from '../db.ts';
import { EffectBusyError, JobCancelledError, JobTimeoutError, LeaseLostError } from '../errors.ts';
import type { Events } from '../events.ts';
import type { Handler } from '../handler.ts';
import { effectKey } from '../job.ts';
import type { Logger } from '../log.ts';
import type { Rng } from '../rng.ts';
import type { ClaimedJob } from './claim.ts';
import type { CompletionBatcher, PendingCompletion } from './completer.ts';
import type { ResolvedQueueOptions } from './options.ts';
import { workerQueries as q } from './queries.ts';
import { workerStrategies } from './strategies.ts';
import { endAttemptSpan, inAttempt, startAttemptSpan, type AttemptSpan } from '../tracing.ts';
import { reportDbError } from './db-error-report.ts';
import type { Beating, HeartbeatScheduler } from './heartbeats.ts';
import { RunContext, type ContextRun } from './run-context.ts';
import { handBackExpired, logUnrecorded, writeOutcome, type OutcomeRun } from './run-outcome.ts';
import { canMove, holdsLease, move, type RunPhase } from './run-phase.ts';

const isThenable = (x: unknown): x is PromiseLike<unknown> => typeof (x as PromiseLike<unknown> | null)?.then === 'function';

/** The reason a timeout's timer is cleared with once the handler settled (a preallocated Error: no stack captured per job). */
const TIMEOUT_DISARMED = new Error('handler settled before its timeout');

export interface JobRunnerDeps {
  db: Db;
  clock: Clock;
  rng: Rng;
  events: Events;
  log: Logger;
  completer: CompletionBatcher;
  workerId: string;
  /** Renews the leases of the runs that outlive a heartbeat period; absent when heartbeats are off. */
  heartbeats?: HeartbeatScheduler;
  /** Counts completions for the worker's last line (WorkerLog): a number, so a completion builds no event for it. */
  tally: { completed: number };
  /** The handler returned (or was abandoned) and heartbeats stopped: the run's slot is free. Called once per run. */
  onHandlerFinished: (run: JobRun) => void;
  /** The outcome is recorded too (or given up on). Called once per run, after onHandlerFinished. */
  onRecorded: (run: JobRun) => void;
}

const EFFECT_BUSY = 'effect held by another holder';

class ShutdownAbort extends Error {
  override name = 'ShutdownAbort';
}

/**
 * Runs one claimed job from start to recorded result: heartbeats while the
 * handler runs, aborts it when the lease is lost or its timeout passes, and
 * records the outcome fenced on the lease token.
 *
 * Cheap for the common short job: no timer of its own (the worker's
 * HeartbeatScheduler renews the leases of the jobs that outlive a heartbeat
 * period), and the handler's AbortSignal is made only when it reads it.
 */
export class JobRun implements Beating, PendingCompletion, ContextRun, OutcomeRun {
  /** Where the run stands (run-phase.ts): every move goes through `to()`, which throws on an illegal one. */
  private phase: RunPhase = 'waiting';
  private controller?: AbortController;
  /** Why the job was aborted (lease lost, timeout, cancel, shutdown); undefined while it may run on. */
  private abortReason?: unknown;
  private rejectRun?: (reason: unknown) => void;
  /** The renewal under way, if any: the outcome waits for it, so a lease it found lost is known first. */
  private renewal?: Promise<void>;
  nextBeatAt: number;
  /**
   * effectOnce's transaction failed for a busy effect (another holder's open transaction), or for a reason of the
   * database's (read-only, out of slots, the connection lost: WorkerStrategies.databaseFault): the job is handed back
   * uncharged, whatever the handler did. The job did nothing wrong; charging it an attempt would dead-letter healthy
   * jobs through a long enough outage. Not a phase: the handler runs on, and its lease may still be lost meanwhile.
   */
  handBackReason: string | undefined = undefined;
  /**
   * Node-clock ms at which the lease may have ended unless a renewal lands first: a whole lease after the last
   * statement that wrote it (the claim, then each renewal that landed) was sent. Past it the heartbeat scheduler
   * calls expire(): a worker that cannot reach the database stops its handler before anyone else can be given the job.
   */
  leaseMayEndAt: number;
  /** Node-clock ms when the claim's answer arrived: a job claimed ahead waits for a slot from then. */
  readonly claimedAt: number;
  /**
   * Node-clock ms when the run started, and how long its handler took (measured once it settled). NaN until then: a
   * non-integer from the start, so V8 keeps the fields as doubles and never changes the object's layout under the
   * optimized code of every run (a field that starts as a small integer and then takes Date.now() does).
   * A started run is one whose startedAt is a number: start() runs once.
   */
  private startedAt = Number.NaN;
  durationMs = Number.NaN;
  /** The slot is given back once (the worker's accounting), whether or not the outcome is recorded yet. */
  private slotFreed = false;
  private donePromise?: Promise<void>;
  private resolveDone?: () => void;
  /** This attempt's OpenTelemetry span (engine/tracing.ts); null without @opentelemetry/api. */
  private attemptSpan: AttemptSpan | null = null;

  constructor(
    readonly job: ClaimedJob,
    private readonly handler: Handler,
    readonly options: ResolvedQueueOptions,
    readonly deps: JobRunnerDeps,
    /** Node-clock ms when the claim that took this job was sent. */
    claimSentAt = deps.clock.now(),
  ) {
    this.claimedAt = deps.clock.now();
    this.nextBeatAt = this.claimedAt + options.heartbeatMs;
    this.leaseMayEndAt = workerStrategies.leaseMayEndAt(claimSentAt, options.leaseMs, this.claimedAt);
    // Renewed from the claim on, also while it waits for a slot (claim-ahead): its lease must outlast the wait.
    if (options.heartbeatMs > 0 && workerStrategies.leaseRenewedFrom === 'claim') deps.heartbeats?.add(this);
  }

  /** The one place a run changes phase. */
  private to(next: RunPhase): void {
    this.phase = move(this.job.id, this.phase, next);
  }

  /** Runs the handler (unless the job was aborted first) and records the outcome; `done` resolves after. A second call does nothing. */
  start(): void {
    if (!Number.isNaN(this.startedAt)) return;
    this.startedAt = this.deps.clock.now();
    if (this.options.heartbeatMs > 0 && workerStrategies.leaseRenewedFrom === 'start') {
      this.nextBeatAt = this.startedAt + this.options.heartbeatMs;
      this.deps.heartbeats?.add(this);
    }
    // A claim whose answer came back after a whole lease (a partition held it), or a job that waited for a slot while
    // no renewal landed, may already be someone else's job: the heartbeats' loop gives such a lease up when it may
    // end, but under load its timer fires late, and the handler must not start in that gap.
    if (this.startedAt >= this.leaseMayEndAt) this.expire();
    // Aborted before it started (handed back at shutdown, or its lease found lost while it waited for a slot): the handler never runs.
    if (this.abortReason !== undefined) return this.handlerSettled(false, undefined, false);
    this.to('running');
    const { job, deps } = this;
    if (deps.events.has('job:started')) deps.events.emit('job:started', { jobId: job.id, queue: job.queue, attempt: this.attempt, workerId: deps.workerId });
    // The handler runs in a microtask, after the whole claimed batch is launched: one microtask calls every handler
    // started in this turn (Node wraps each queueMicrotask callback in an AsyncResource, which cost more per job than the rest of the start).
    if (JobRun.toCall.push(this) === 1) queueMicrotask(JobRun.callHandlers);
  }

  /** Runs started and waiting for their handler call, in start order. */
  private static toCall: JobRun[] = [];

  private static callHandlers(): void {
    const runs = JobRun.toCall;
    JobRun.toCall = []; // runs started by these handlers' slots freeing go in a microtask of their own, as before
    for (const run of runs) run.callHandler();
  }

  /** Resolves when the outcome is recorded (or given up on). Made on first read: most runs are never awaited one by one. */
  get done(): Promise<void> {
    if (this.phase === 'recorded') return Promise.resolve();
    return (this.donePromise ??= new Promise((resolve) => (this.resolveDone = resolve)));
  }

  private freeSlot(): void {
    if (this.slotFreed) return;
    this.slotFreed = true;
    this.deps.onHandlerFinished(this);
  }

  private markRecorded(): void {
    this.freeSlot();
    this.to('recorded');
    this.deps.onRecorded(this);
    this.resolveDone?.();
  }

  /** Shutdown's grace ran out, or the worker stops before this job got a slot: abort the handler; the worker hands the claim back. */
  abandon(): void {
    // A run whose lease is already given up (lost, expired) or whose outcome is written has nothing to hand back.
    if (canMove(this.phase, 'handed-back')) this.to('handed-back');
    this.abortWith(new ShutdownAbort('worker is shutting down; the job is handed back'));
  }

  /** The handler's signal, made on first read. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortReason !== undefined) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  private abortWith(reason: unknown): void {
    if (this.abortReason !== undefined) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
    this.rejectRun?.(reason);
  }

  get attempt(): number {
    return this.job.attempts;
  }

  /*
   * The common run (a handler that returns, its completion batched) is plain callbacks, no async function: each async
   * frame, its promise and each await allocated per job, and they were the largest allocation of a drain. A failure, a
   * hand-back for a busy effect and a completion inside effectOnce take the async path; they are rare.
   */

  private callHandler(): void {
    if (this.abortReason !== undefined) return this.handlerSettled(true, this.abortReason, false);
    let work: unknown;
    this.attemptSpan = startAttemptSpan(this.job, this.attempt);
    try {
      const ctx = new RunContext(this, this.job, this.attempt, this.deps.workerId, this.deps.db);
      work = this.attemptSpan ? inAttempt(this.attemptSpan, () => this.handler(this.job.payload, ctx)) : this.handler(this.job.payload, ctx);
    } catch (err) {
      return this.handlerSettled(true, err);
    }
    if (!isThenable(work)) return this.handlerSettled(false, undefined);
    this.race(work).then(
      () => this.handlerSettled(false, undefined),
      (err: unknown) => this.handlerSettled(true, err),
    );
  }

  /**
   * The handler returned or threw (or never ran: `ran` false, and durationMs stays NaN, so a job given up unrun does
   * not count as a fast handler): heartbeats stop, and once a renewal under way has landed (it may have found the
   * lease lost), the outcome is decided.
   */
  private handlerSettled(failed: boolean, error: unknown, ran = true): void {
    endAttemptSpan(this.attemptSpan, failed, error);
    if (ran) this.durationMs = this.deps.clock.now() - this.startedAt;
    // A run that never ran gives its place (a slot, or the claim-ahead buffer's) back now, not after a renewal under
    // way has landed: a partition may hold that renewal for longer than the lease.
    else this.freeSlot();
    // A run aborted (lost, expired, handed back) keeps that phase: it decides the outcome. One that completed in its
    // effect's transaction keeps that too.
    if (this.phase === 'running' || this.phase === 'finishing') this.to('settled');
    this.deps.heartbeats?.delete(this);
    if (!this.renewal) return this.recordOutcome(failed, error);
    const record = () => this.recordOutcome(failed, error);
    this.renewal.then(record, record);
  }

  private recordOutcome(failed: boolean, error: unknown): void {
    const { job, deps } = this;
    this.freeSlot();
    switch (this.phase) {
      case 'expired':
        void handBackExpired(this).finally(() => this.markRecorded());
        return;
      case 'handed-back':
      case 'lost':
        return this.markRecorded(); // the new owner decides this job's fate
      case 'completed-in-tx':
        deps.tally.completed++;
        deps.events.emit('job:completed', { jobId: job.id, queue: job.queue, attempt: this.attempt, workerId: deps.workerId, durationMs: this.durationMs, leaseToken: job.leaseToken });
        return this.markRecorded();
    }
    if (failed || this.handBackReason !== undefined) {
      void writeOutcome(this, error).finally(() => this.markRecorded());
      return;
    }
    deps.completer.complete(this);
  }

  /** CompletionBatcher: the completion committed, or its fence found the lease lost. */
  completionWritten(completed: boolean): void {
    const { job, deps } = this;
    if (!completed) deps.events.emit('lease:lost', { jobId: job.id, queue: job.queue, attempt: this.attempt, workerId: deps.workerId, phase: 'complete', handlerMs: this.durationMs, leaseToken: job.leaseToken });
    else {
      deps.tally.completed++;
      if (deps.events.has('job:completed')) {
        deps.events.emit('job:completed', { jobId: job.id, queue: job.queue, attempt: this.attempt, workerId: deps.workerId, durationMs: this.durationMs, leaseToken: job.leaseToken });
      }
    }
    this.markRecorded();
  }

  /** CompletionBatcher: the completion could not be written (database gone for longer than the retry window). */
  completionFailed(err: unknown): void {
    logUnrecorded(this, err);
    this.markRecorded();
  }

  /** Settles with the handler's promise, or rejects as soon as the job is aborted (lease lost, timeout, shutdown). */
  private race(work: PromiseLike<unknown>): Promise<unknown> {
    const timeoutMs = this.options.timeoutMs;
    let timeout: AbortController | undefined;
    if (timeoutMs !== undefined) {
      timeout = new AbortController();
      workerStrategies
        .handlerTimeout(this.deps.clock, timeoutMs, timeout.signal)
        .then(() => this.abortWith(new JobTimeoutError(timeoutMs)))
        .catch(() => {});
    }
    // A handler that rejects after being abandoned must not crash the process: the rejection lands here, already settled.
    const settled = new Promise<unknown>((resolve, reject) => {
      this.rejectRun = reject;
      if (this.abortReason !== undefined) reject(this.abortReason);
      work.then(resolve, reject);
    });
    if (!timeout) return settled;
    return settled.finally(() => timeout.abort(TIMEOUT_DISARMED));
  }

  /** One lease renewal (the HeartbeatScheduler calls it once the lease is due for one). */
  beat(): void {
    if (this.renewal || !holdsLease(this.phase)) return;
    this.nextBeatAt = Infinity;
    this.renewal = this.renew(this.deps.clock.now()).finally(() => {
      this.renewal = undefined;
      this.nextBeatAt = this.deps.clock.now() + this.options.heartbeatMs;
    });
  }

  /**
   * No renewal landed for a whole lease (the database unreachable, paused or
   * refusing writes): by this worker's own clock the lease may have ended, and
   * another worker may be given the job as soon as it has. The handler is
   * aborted now, before that can happen, and the outcome left to whoever
   * holds the job next (`lease:lost`, phase `expired`). Measured from when
   * the last successful renewal (or the claim) was sent, which is no later
   * than when the database wrote the expiry, so the abort comes no later
   * than the expiry on the database's clock. Inside effectOnce's
   * transaction the transaction's fence decides instead.
   */
  expire(): void {
    const { job, deps } = this;
    if (this.phase === 'finishing' || this.phase === 'completed-in-tx') {
      this.leaseMayEndAt = Infinity;
      return;
    }
    deps.heartbeats?.delete(this);
    if (!holdsLease(this.phase) || this.abortReason !== undefined) return;
    this.to('expired');
    deps.log.warn('no lease renewal landed for a whole lease; the lease may have expired, so the job is aborted', { jobId: job.id, leaseMs: this.options.leaseMs });
    deps.events.emit('lease:lost', { jobId: job.id, queue: job.queue, attempt: this.attempt, workerId: deps.workerId, phase: 'expired', leaseToken: job.leaseToken });
    this.abortWith(new LeaseLostError(job.id));
    this.settleIfWaiting();
  }

  /**
   * A job that gave its lease up while it waited for a slot leaves the claim-ahead buffer now (the worker drops it
   * when its slot accounting is called), handed back if it is still ours: left there until a slot freed, it would
   * hold its place behind running handlers while its lease is gone, and the job, due again, could be claimed a
   * second time by this same worker beside it.
   */
  private settleIfWaiting(): void {
    if (Number.isNaN(this.startedAt)) this.start();
  }

  private async renew(sentAt: number): Promise<void> {
    const { job, deps } = this;
    try {
      // Renew through effectOnce's transaction too (it may outlast the lease), but a renewal that
      // finds no lease once that transaction is under way proves nothing: our own commit may have
      // cleared it, and the transaction's fence decides.
      const res = await deps.db.query(q.RenewLease, [job.id, job.leaseToken, this.options.leaseMs]);
      // Answered after the run gave the lease up (expire()): the job is no longer this run's to report on.
      if (this.phase === 'lost' || this.phase === 'expired') return;
      if (res.rowCount === 0) {
        // No more renewals: there is no lease to renew.
        deps.heartbeats?.delete(this);
        if (this.phase === 'finishing' || this.phase === 'completed-in-tx') return;
        if (canMove(this.phase, 'lost')) this.to('lost');
        // Tell an operator's cancel (engine/control) from a lease taken over: the handler may stop differently.
        const state = (await deps.db.query(q.JobState, [job.id]).catch(() => ({ rows: [] }))).rows[0]?.state;
        const event = { jobId: job.id, queue: job.queue, attempt: this.attempt, workerId: deps.workerId };
        if (state === 'cancelled') {
          deps.events.emit('job:cancelled', event);
          this.abortWith(new JobCancelledError(job.id));
          this.settleIfWaiting();
          return;
        }
        // A handler that had already returned (its outcome waited for this renewal) says how long it ran.
        deps.events.emit('lease:lost', { ...event, phase: 'heartbeat', leaseToken: job.leaseToken, ...(Number.isFinite(this.durationMs) ? { handlerMs: this.durationMs } : {}) });
        this.abortWith(new LeaseLostError(job.id));
        this.settleIfWaiting();
        return;
      }
      const row = res.rows[0];
      this.leaseMayEndAt = workerStrategies.leaseMayEndAt(sentAt, this.options.leaseMs, deps.clock.now());
      deps.events.emit('lease:renewed', {
        jobId: job.id,
        queue: job.queue,
        attempt: this.attempt,
        workerId: deps.workerId,
        dbRenewedAt: (row.db_now as Date).getTime(),
        dbLeaseExpiresAt: (row.lease_expires_at as Date).getTime(),
      });
    } catch (err) {
      // Keep trying: a renewal that fails now may succeed before the lease runs out (expire() decides when it cannot).
      deps.log.warn('heartbeat failed', { jobId: job.id, error: (err as Error).message });
      reportDbError(deps, err, 'heartbeat');
    }
  }

  /** ctx.effectOnce (RunContext). */
  async effectOnce<T>(fn: (tx: import('pg').PoolClient) => Promise<T>): Promise<{ applied: boolean; result?: T }> {
    const { job, deps } = this;
    if (this.phase === 'finishing' || this.phase === 'completed-in-tx') {
      // The job completes in the first effectOnce's transaction; a second one would find it done.
      throw new Error(`job ${job.id}: effectOnce may be called once per job; put every write of the effect in one call`);
    }
    // A handler that runs on after its run was aborted (lost, expired, handed back) still reaches its transaction,
    // whose fence decides; its run's fate is already set, so its phase does not move.
    const tracked = this.phase === 'running';
    if (tracked) this.to('finishing');
    const outcome = await workerStrategies.effectOnce(deps.db, job, effectKey(job), fn).catch((err) => {
      // Rolled back (or its answer lost: the fence of the hand-back tells): heartbeats mean something again.
      if (tracked && this.phase === 'finishing') this.to('running');
      const dbFault = workerStrategies.databaseFault(err);
      // A busy effect's hand-back stands; a database fault's is as of this transaction's failure.
      if (err instanceof EffectBusyError) this.handBackReason = EFFECT_BUSY;
      else if (this.handBackReason !== EFFECT_BUSY) this.handBackReason = dbFault ? `database unavailable (${dbFault})` : undefined;
      if (dbFault) reportDbError(deps, err, 'effect');
      throw err;
    });
    // Completed in its transaction, or to complete the ordinary way after the handler.
    if (tracked && (this.phase as RunPhase) === 'finishing') this.to(outcome.completedJob ? 'completed-in-tx' : 'running');
    return { applied: outcome.applied, result: outcome.result };
  }
}

