import type { Clock } from '../clock.ts';

/** A job run whose lease is renewed on a schedule. */
export interface Beating {
  /** Node-clock ms at which the next renewal is due (Infinity while one is under way). */
  readonly nextBeatAt: number;
  /** Starts one renewal; the run moves `nextBeatAt` on when it has landed. */
  beat(): void;
  /** Node-clock ms at which the lease may have ended unless a renewal lands first (see JobRun.expire). */
  readonly leaseMayEndAt: number;
  /** No renewal landed in time: the lease may be gone; the run aborts its handler and leaves the scheduler. */
  expire(): void;
}

/**
 * One timer for every running job's heartbeat, instead of one timer (and
 * its abort signal) per job: a job that finishes before its first heartbeat
 * is due, which is almost every job, costs a Set insert and delete, nothing
 * more. The loop sleeps until the earliest renewal is due, but never longer
 * than the shortest heartbeat period, so a job added meanwhile is never late:
 * its first renewal is due a whole period after it started.
 */
export class HeartbeatScheduler {
  private readonly runs = new Set<Beating>();
  private readonly stopSignal = new AbortController();
  private loop?: Promise<void>;

  constructor(
    private readonly clock: Clock,
    /** The shortest heartbeat period of the worker's queues, ms (> 0). */
    private readonly maxSleepMs: number,
  ) {}

  add(run: Beating): void {
    this.runs.add(run);
    if (!this.loop && !this.stopSignal.signal.aborted) this.loop = this.run();
  }

  delete(run: Beating): void {
    this.runs.delete(run);
  }

  /** Stops the loop; renewals under way finish on their own. Safe to call twice. */
  async stop(): Promise<void> {
    this.stopSignal.abort(new Error('heartbeat scheduler stopped'));
    await this.loop;
  }

  private async run(): Promise<void> {
    const stop = this.stopSignal.signal;
    while (!stop.aborted) {
      const now = this.clock.now();
      let next = now + this.maxSleepMs;
      for (const run of this.runs) {
        // A renewal that hangs (a partition, a paused server) keeps nextBeatAt at Infinity: the lease's own end still wakes the loop.
        if (run.leaseMayEndAt <= now) {
          run.expire();
          continue;
        }
        if (run.nextBeatAt <= now) run.beat();
        if (run.nextBeatAt < next) next = run.nextBeatAt;
        if (run.leaseMayEndAt < next) next = run.leaseMayEndAt;
      }
      await this.clock.sleep(Math.max(1, next - now), stop).catch(() => {});
    }
  }
}
