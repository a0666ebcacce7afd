import { backoffCeilingMs, RECONNECT_BACKOFF } from './backoff.ts';
import { dbErrorKind } from '../errors.ts';
import { hostname } from 'node:os';
import { setImmediate as endOfTurn } from 'node:timers/promises';
import { startTimer, systemClock, type Clock } from '../clock.ts';
import { DEFAULTS } from '../defaults.ts';
import { Events } from '../events.ts';
import { bindOtelRed } from '../metrics/otel-metrics.ts';
import { createLogger, type Logger } from '../log.ts';
import { SeededRng, randomSeed, type Rng } from '../rng.ts';
import { HANDLER_MEAN_WEIGHT } from './claim-ahead.ts';
import { claimJobs, claimSuspect, oldestSuspectWaitMs } from './claim.ts';
import type { ClaimedJob } from './claim.ts';
import { CompletionBatcher } from './completer.ts';
import { HeartbeatScheduler } from './heartbeats.ts';
import { JobRun, type JobRunnerDeps } from './job-runner.ts';
import { reportDbError } from './db-error-report.ts';
import { workerStrategies } from './strategies.ts';
import { EnqueueListener } from './notifier.ts';
import { resolveQueueOptions, validateWorkerOptions, type ResolvedQueueOptions, type WorkerOptions } from './options.ts';
import { workerQueries as q } from './queries.ts';
import { WorkerLiveness } from './liveness.ts';
import { LeaseRescuer } from './rescuer.ts';
import { WorkerLog } from './worker-log.ts';

/**
 * How soon after a NOTIFY wake-up the worker claims again: enqueues within 10 ms of a notifying one skip their own NOTIFY
 * (migrations/0007_notify_throttle.sql), so the claims every 2.5 ms through the window find those, each after a quarter
 * of the window at most, and the next NOTIFY (or its own trailing claims) those of the window's end. One claim at 5 ms
 * left a skipped job waiting up to half the window: that wait was a 500 jobs/s stream's p99 due-to-start (6.4-7.3 ms
 * against graphile-worker's 5.6-6.8 at concurrency 10, which notifies every insert; docs/benchmark-issue15.md). The cost:
 * two more claims per NOTIFY per worker, so at most 200 more a second each (the throttle sends at most 100 NOTIFYs a
 * second), and none from a worker with no free slot (runOnce). The claim at 50 ms covers a skipped enqueue whose commit
 * took longer.
 */
export const NOTIFY_TRAILING_CLAIMS_MS = [2.5, 5, 7.5, 50];

/**
 * After an empty claim, the next look comes this soon, then twice as late after each further empty one, until that
 * passes the poll interval. An empty claim does not prove the queue empty: SKIP LOCKED passes over the rows another
 * worker's claim is locking right now, and a worker with nothing of its own running has no freed slot to wake it.
 * The doubling outlasts a slow claim; seven empty claims follow a worker's last job before the poll (1 s) takes over.
 */
const RECHECK_AFTER_EMPTY_MS = 10;

/**
 * The worker loop: claims as many due jobs as it has free slots, runs them,
 * and sleeps until a NOTIFY, a freed slot or the poll interval wakes it.
 * A database error never kills the loop: it backs off and tries again, so a
 * terminated connection or a Postgres restart costs latency, not jobs.
 */
export class Worker {
  readonly id: string;
  readonly events: Events;
  private readonly clock: Clock;
  private readonly rng: Rng;
  private readonly log: Logger;
  private readonly queues: string[];
  private readonly queueOptions: Map<string, ResolvedQueueOptions>;
  private readonly completer: CompletionBatcher;
  private readonly listener?: EnqueueListener;
  private readonly rescuer?: LeaseRescuer;
  /** Unbinds the RED metrics through OpenTelemetry (engine/metrics/otel-metrics.ts); null without a MeterProvider. */
  private unbindOtel: (() => void) | null = null;
  private readonly liveness: WorkerLiveness;
  private readonly heartbeats?: HeartbeatScheduler;
  /** The lines an operator reads: failures, dead letters, lost leases, and the totals when it stops. */
  private readonly report: WorkerLog;
  /** What every claim of this worker names: its queues, their leases (ms, aligned with them) and its id. */
  private readonly claimBase: { queues: string[]; leaseMs: number[]; workerId: string };
  /** What every JobRun of this worker shares. */
  private readonly runDeps: JobRunnerDeps;
  /** Jobs whose handler is running: they hold a slot. */
  private readonly inFlight = new Set<JobRun>();
  /** Claimed ahead, waiting for a slot, oldest claim first; their leases are renewed meanwhile. */
  private readonly waiting: JobRun[] = [];
  private readonly concurrency: number;
  /** Jobs this worker may hold claimed beyond `concurrency` (0 when any of its queues runs without heartbeats). */
  private claimAhead: number;
  /** claimAhead unset and heartbeats on: the buffer grows while the queue is backed up (claim-ahead.ts). */
  private readonly aheadGrows: boolean;
  private readonly baseAhead: number;
  /** The handlers' mean duration, ms (an exponential moving average): what bounds a grown buffer. */
  private handlerMeanMs = Number.NaN;
  /** The longest a job waited in the buffer for a slot since the last claim, ms: the other bound of a grown buffer. */
  private longestAheadWaitMs = 0;
  /** Half the shortest heartbeat period of the worker's queues: a job claimed ahead should start before its first renewal. */
  private readonly aheadMaxWaitMs: number;
  /** Jobs whose outcome is not yet recorded (their handlers may be done): completions commit in batches behind the slots. */
  private readonly recording = new Set<JobRun>();
  private running = false;
  /** Running a suspect alone: claim nothing else until it is done. */
  private isolating = false;
  /** Wait of the oldest due suspect at the last check, ms; null when none. */
  private suspectWaitMs: number | null = null;
  private suspectsCheckedAt = -Infinity;
  private loop?: Promise<void>;
  private stopping?: Promise<void>;
  /** Something woke the loop since this turn's claim began: its pause ends at once. */
  private woken = false;
  /** Ends the loop's pause early; set while it pauses. */
  private resumeLoop: (() => void) | null = null;
  /**
   * Owed by the NOTIFYs received: when (node clock) to claim again, for jobs whose own (throttled) NOTIFY was skipped.
   * Deadlines, not a flag: a claim woken earlier (a handler finishing) pays none of them. A handful at most (two per NOTIFY
   * of the last 50 ms).
   */
  private trailingClaimsAt: number[] = [];
  /**
   * The last runOnce claimed nothing because of this worker's own state (no free slot, the claim-ahead buffer not half
   * spent, completions behind, a suspect to isolate): a handler finishing or an outcome recorded may lift that, so they
   * wake the loop.
   */
  private heldBack = false;
  /**
   * Claims in a row that found nothing (0: the last one found jobs, or none ran yet). While claims find jobs the queue
   * is flowing and a handler finishing claims again; after empty ones it does not (woken by every freed slot and every
   * recorded outcome, the claims, most of them empty, were most of a busy worker's statements at 500 jobs/s):
   * RECHECK_AFTER_EMPTY_MS does.
   */
  private emptyClaims = 0;
  /** A claim is running; an outcome was recorded meanwhile (see recorded()). */
  private claiming = false;
  private recordedDuringClaim = false;

  constructor(private readonly options: WorkerOptions) {
    validateWorkerOptions(options);
    this.clock = options.clock ?? systemClock;
    this.rng = options.rng ?? new SeededRng(randomSeed());
    this.id = options.workerId ?? `${hostname()}:${process.pid}:${this.rng.int(0, 0xffffff).toString(16)}`;
    this.log = (options.log ?? createLogger('worker')).child(this.id);
    this.events = options.events ?? new Events((err, event) => this.log.warn('event listener threw', { event, error: String(err) }));
    this.queues = Object.keys(options.handlers);
    this.queueOptions = new Map(this.queues.map((name) => [name, resolveQueueOptions(options, name)]));
    this.claimBase = { queues: this.queues, leaseMs: this.queues.map((name) => this.queueOptions.get(name)!.leaseMs), workerId: this.id };
    this.completer = new CompletionBatcher(options.db, this.clock, this.log, undefined, (err) => reportDbError({ events: this.events, workerId: this.id }, err, 'result'));
    this.report = new WorkerLog({
      events: this.events,
      log: this.log,
      clock: this.clock,
      workerId: this.id,
      maxCrashes: options.maxCrashes ?? DEFAULTS.maxCrashes,
    });
    const beatPeriods = [...this.queueOptions.values()].map((o) => o.heartbeatMs);
    if (beatPeriods.some((ms) => ms > 0)) this.heartbeats = new HeartbeatScheduler(this.clock, Math.min(...beatPeriods.filter((ms) => ms > 0)));
    this.concurrency = options.concurrency ?? DEFAULTS.concurrency;
    // A job claimed ahead waits for a slot under its lease: only heartbeats make any wait safe, so without them no claim-ahead.
    this.claimAhead = beatPeriods.every((ms) => ms > 0) ? (options.claimAhead ?? this.concurrency) : 0;
    this.baseAhead = this.claimAhead;
    this.aheadGrows = options.claimAhead === undefined && this.claimAhead > 0;
    this.aheadMaxWaitMs = Math.min(...beatPeriods) / 2;
    this.runDeps = {
      db: options.db,
      clock: this.clock,
      rng: this.rng,
      events: this.events,
      log: this.log,
      completer: this.completer,
      workerId: this.id,
      heartbeats: this.heartbeats,
      tally: this.report,
      onHandlerFinished: (run) => this.handlerFinished(run),
      onRecorded: (run) => this.recorded(run),
    };
    this.liveness = new WorkerLiveness(options.db, this.id, this.clock, this.log.child('liveness'), options.livenessMs ?? DEFAULTS.livenessMs);
    if (options.listen ?? true) {
      this.listener = new EnqueueListener(
        options.db,
        this.clock,
        this.log,
        () => {
          const now = this.clock.now();
          for (const ms of NOTIFY_TRAILING_CLAIMS_MS) this.trailingClaimsAt.push(now + ms);
          this.wakeUp();
        },
        () => this.events.emit('worker:listening', { workerId: this.id }),
      );
    }
    if (workerStrategies.runsRescuer(options)) {
      this.rescuer = new LeaseRescuer({
        db: options.db,
        intervalMs: options.rescueIntervalMs,
        maxCrashes: options.maxCrashes,
        clock: this.clock,
        events: this.events,
        log: this.log.child('rescuer'),
        onRescued: () => {
          this.suspectWaitMs ??= 0;
          this.wakeUp(); // the rescued jobs are due now
        },
      });
    }
  }

  /** Jobs running now. */
  get activeJobs(): number {
    return this.inFlight.size;
  }

  start(): void {
    if (this.running || this.stopping) return;
    this.running = true;
    this.unbindOtel = bindOtelRed(this.events, this.id);
    this.report.start();
    this.liveness.start();
    this.listener?.start();
    this.rescuer?.start();
    this.loop = this.run();
  }

  /**
   * Stops claiming, lets in-flight jobs finish within the grace period, then
   * aborts the rest and hands their claims back (without charging the
   * attempt) so another worker takes them at once. Safe to call twice.
   */
  stop(graceMs = this.options.shutdownGraceMs ?? DEFAULTS.shutdownGraceMs): Promise<void> {
    if (!this.stopping) this.events.emit('worker:stopping', { workerId: this.id });
    this.stopping ??= this.shutdown(graceMs);
    return this.stopping;
  }

  /**
   * One claim: fills free slots (and the claim-ahead buffer) with due jobs
   * and starts as many as there are slots. Returns how many it claimed. Suspects (jobs that were in flight when a worker died)
   * run one at a time, each alone: the worker runs the suspect by itself and
   * claims nothing else until it is done. So when a job kills its process
   * again, it alone is charged with the crash, and the innocent jobs that
   * shared the first crashed process go free (also those whose completion
   * was still being written, or claimed ahead and waiting for a slot: the worker
   * waits for them). An idle worker (nothing running or waiting) takes a suspect
   * at once; a busy one drains for it only once the oldest suspect has waited
   * `suspectPatienceMs`, so a mass rescue does not stall every worker at once.
   */
  async runOnce(): Promise<number> {
    this.heldBack = true;
    if (this.isolating) return 0;
    const db = this.options.db;
    const base = this.claimBase;
    const checkEveryMs = this.options.rescueIntervalMs ?? DEFAULTS.rescueIntervalMs;
    // Every lease this process takes is written after the liveness announcement, so the rescuer can tell them from an
    // earlier incarnation's (once per process: later calls return the settled announcement). The suspects are read
    // beside it, not after: a worker's first claim then waits for one round trip before it, not two.
    if (this.clock.now() - this.suspectsCheckedAt >= checkEveryMs) {
      this.suspectsCheckedAt = this.clock.now();
      [, this.suspectWaitMs] = await Promise.all([this.liveness.begin(), oldestSuspectWaitMs(db, this.queues)]);
    } else {
      await this.liveness.begin();
    }
    const patienceMs = this.options.suspectPatienceMs ?? DEFAULTS.suspectPatienceMs;
    if (this.suspectWaitMs !== null && (this.held() === 0 || this.suspectWaitMs >= patienceMs)) {
      // Drain first, completions and jobs claimed ahead included: a job whose handler returned but whose completion has not
      // committed, or one waiting for a slot, is still this worker's claim, and would share the suspect's crash. A recorded outcome wakes the loop.
      if (this.recording.size > 0) return 0;
      const sentAt = this.clock.now();
      const suspect = await claimSuspect(db, base);
      if (suspect) {
        this.isolating = true;
        void this.launch(suspect, sentAt).done.finally(() => {
          this.isolating = false;
          this.wakeUp();
        });
        return 1;
      }
      this.suspectWaitMs = null;
    }
    const free = this.freeToClaim();
    if (free <= 0) return 0;
    // Enough claimed ahead to fill the next slots: wait until the buffer is half spent, so each claim takes a batch.
    if (this.waiting.length > this.claimAhead / 2) return 0;
    // Backpressure: when the database falls behind on recording outcomes, stop taking more work. One claim's worth may
    // still be on its way in while the next claim runs: that overlap is what keeps both the worker and the database busy.
    // A grown buffer (claim-ahead.ts) makes one claim's worth larger, up to concurrency + AHEAD_CAP.
    if (this.recording.size - this.held() > this.concurrency + this.claimAhead) return 0;
    this.heldBack = false;
    this.claiming = true;
    this.recordedDuringClaim = false;
    let jobs: ClaimedJob[];
    const sentAt = this.clock.now();
    try {
      jobs = await claimJobs(db, { ...base, limit: free, agingMs: this.options.agingMs ?? DEFAULTS.agingMs });
    } finally {
      this.claiming = false;
    }
    this.emptyClaims = jobs.length > 0 ? 0 : this.emptyClaims + 1;
    if (this.aheadGrows) {
      this.claimAhead = workerStrategies.claimAheadFor({
        base: this.baseAhead,
        concurrency: this.concurrency,
        meanHandlerMs: this.handlerMeanMs,
        lastClaimFull: jobs.length === free,
        current: this.claimAhead,
        longestWaitMs: this.longestAheadWaitMs,
        maxWaitMs: this.aheadMaxWaitMs,
      });
      this.longestAheadWaitMs = 0;
    }
    if (this.emptyClaims === 1 && this.recordedDuringClaim) this.wakeUp();
    for (const job of jobs) this.launch(job, sentAt);
    return jobs.length;
  }

  /** Jobs claimed and not yet done running: running ones and those waiting for a slot. */
  private held(): number {
    return this.inFlight.size + this.waiting.length;
  }

  /** How many more jobs the next claim may take: free slots plus room in the claim-ahead buffer. */
  private freeToClaim(): number {
    return this.concurrency + this.claimAhead - this.held();
  }

  /**
   * Starts waiting jobs while slots are free; none once stop() was called. A slot freed, or a claim that was under way
   * returning, while the loop winds down must not start a job claimed ahead: shutdown hands every one back.
   */
  private fillSlots(): void {
    if (this.stopping) return;
    const now = this.aheadGrows && this.waiting.length > 0 ? this.clock.now() : 0;
    while (this.waiting.length > 0 && workerStrategies.freeSlots(this.inFlight.size, this.concurrency) > 0) {
      const run = this.waiting.shift()!;
      if (this.aheadGrows && now - run.claimedAt > this.longestAheadWaitMs) this.longestAheadWaitMs = now - run.claimedAt;
      this.inFlight.add(run);
      run.start();
    }
  }

  /** `sentAt`: node-clock ms when the claim that took it was sent (its lease runs from then at the latest). */
  private launch(job: ClaimedJob, sentAt: number): JobRun {
    if (this.events.has('job:claimed')) {
      this.events.emit('job:claimed', {
        jobId: job.id,
        queue: job.queue,
        priority: job.priority,
        attempt: job.attempts,
        workerId: this.id,
        runAt: job.runAt.getTime(),
        dbClaimedAt: job.dbClaimedAt.getTime(),
        dbTakenAt: job.dbTakenAt.getTime(),
        crashCount: job.crashCount,
        dbLeaseExpiresAt: job.leaseExpiresAt!.getTime(),
        fairnessKey: job.fairnessKey,
        leaseToken: job.leaseToken,
      });
    }
    const run = new JobRun(job, this.options.handlers[job.queue], this.queueOptions.get(job.queue)!, this.runDeps, sentAt);
    // The slot frees when the handler returns (onHandlerFinished); the outcome commits in the completion batch
    // behind it (onRecorded), so the next claim and the last completions overlap instead of taking turns.
    this.recording.add(run);
    // A claim answered after its lease may have ended (a partition held the answer) is given up and handed back now,
    // not once a slot frees: it never takes a place in the buffer.
    if (this.clock.now() >= run.leaseMayEndAt) {
      run.start();
      return run;
    }
    this.waiting.push(run);
    this.fillSlots();
    return run;
  }

  /** A run's handler returned: its slot takes the next waiting job. */
  private handlerFinished(run: JobRun): void {
    // One that never got a slot gave its lease up while it waited (JobRun.settleIfWaiting): it leaves the buffer.
    if (!this.inFlight.delete(run)) {
      const i = this.waiting.indexOf(run);
      if (i >= 0) this.waiting.splice(i, 1);
    }
    if (Number.isFinite(run.durationMs)) {
      this.handlerMeanMs = Number.isNaN(this.handlerMeanMs) ? run.durationMs : this.handlerMeanMs + (run.durationMs - this.handlerMeanMs) * HANDLER_MEAN_WEIGHT;
    }
    this.fillSlots();
    if (this.heldBack || this.emptyClaims === 0) this.wakeUp();
  }

  private recorded(run: JobRun): void {
    this.recording.delete(run);
    // An outcome recorded during or after the first empty claim earns one more: a queue's in-flight limit counts a job
    // until its completion commits, so the claim its handler finishing woke may have been refused for this very job.
    if (this.heldBack || this.emptyClaims === 1) this.wakeUp();
    else if (this.claiming) this.recordedDuringClaim = true;
  }

  private wakeUp(): void {
    if (this.woken) return;
    this.woken = true;
    const resume = this.resumeLoop;
    this.resumeLoop = null;
    resume?.();
  }

  /**
   * The loop's pause: `ms`, or until wakeUp(), at once if it was called since this turn's claim began. A timer it
   * cancels, not a sleep cut short through an AbortController: the loop pauses and is woken hundreds of times a second,
   * and AbortSignals outlive young-generation collections (clock.ts startTimer).
   */
  private pause(ms: number): Promise<void> {
    if (this.woken) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = startTimer(this.clock, ms, () => {
        this.resumeLoop = null;
        resolve();
      });
      this.resumeLoop = () => {
        timer.cancel();
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    const pollMs = this.options.pollMs ?? DEFAULTS.pollMs;
    let failures = 0;
    while (this.running) {
      // Wakes from here on end the next pause, so a NOTIFY that lands during the claim is not lost.
      this.woken = false;
      if (this.trailingClaimsAt.length > 0) {
        const now = this.clock.now();
        this.trailingClaimsAt = this.trailingClaimsAt.filter((at) => at > now); // this claim pays the ones due
      }
      let claimed = 0;
      try {
        const free = this.freeToClaim();
        claimed = await this.runOnce();
        failures = 0;
        if (claimed > 0 && claimed === free) {
          // Probably more due. The next claim waits for this turn of the event loop to end: the jobs just launched run
          // first (quick ones all finish in it), so it takes the slots they freed in one batch, not half of them.
          await endOfTurn();
          continue;
        }
      } catch (err) {
        failures++;
        const message = (err as Error).message;
        this.events.emit('worker:error', { workerId: this.id, error: message });
        reportDbError({ events: this.events, workerId: this.id }, err, 'claim');
        // The kind says what an operator should look at: read_only (a demoted primary), too_many_connections, ...
        this.log.warn('claim failed; backing off', { attempt: failures, error: message, kind: dbErrorKind(err) ?? 'other' });
        await this.clock.sleep(backoffCeilingMs(failures + 1, RECONNECT_BACKOFF)).catch(() => {});
        continue;
      }
      if (!this.running) break;
      // The next claim owed to a NOTIFY (NOTIFY_TRAILING_CLAIMS_MS) or to an empty claim (RECHECK_AFTER_EMPTY_MS), or the poll.
      let pauseMs = pollMs;
      if (claimed === 0 && !this.heldBack) pauseMs = Math.min(pauseMs, RECHECK_AFTER_EMPTY_MS * 2 ** (this.emptyClaims - 1));
      for (const at of this.trailingClaimsAt) pauseMs = Math.min(pauseMs, at - this.clock.now());
      pauseMs = Math.max(0, pauseMs);
      await this.pause(pauseMs);
    }
  }

  private async shutdown(graceMs: number): Promise<void> {
    this.running = false;
    this.wakeUp();
    await this.loop;
    // Jobs claimed ahead that never got a slot go back at once, uncharged: another worker may run them now.
    const { handBack, start } = workerStrategies.claimedAheadAtStop(this.waiting.splice(0));
    for (const run of start) {
      this.inFlight.add(run);
      run.start();
    }
    await this.handBack(handBack);
    await this.listener?.stop();
    await this.rescuer?.stop();
    const finished = Promise.all([...this.recording].map((r) => r.done));
    const grace = new AbortController();
    const timedOut = await Promise.race([
      finished.then(() => false),
      this.clock.sleep(graceMs, grace.signal).then(
        () => true,
        () => false,
      ),
    ]);
    grace.abort();
    if (timedOut) await this.handBack([...this.inFlight]);
    await Promise.all([...this.recording].map((r) => r.done));
    await this.heartbeats?.stop();
    await this.completer.drain();
    await this.liveness.stop();
    this.report.stop();
    this.unbindOtel?.();
  }

  private async handBack(runs: JobRun[]): Promise<void> {
    if (runs.length === 0) return;
    for (const run of runs) run.abandon();
    for (const run of runs) run.start(); // one that never got a slot ends at once, its handler never called
    const res = await this.options.db
      .query(q.ReleaseJobs, [runs.map((r) => r.job.id), runs.map((r) => r.job.leaseToken)])
      .catch((err) => {
        this.log.warn('could not hand back claims; their leases will expire', { error: (err as Error).message });
        return { rows: [] as { id: number }[] };
      });
    this.log.info('handed back unfinished jobs', { count: res.rows.length });
    const released = new Set(res.rows.map((r) => r.id));
    for (const { job } of runs) {
      if (released.has(job.id)) this.events.emit('lease:released', { jobId: job.id, queue: job.queue, attempt: job.attempts, workerId: this.id });
    }
    await Promise.all(runs.map((r) => r.done));
  }
}
