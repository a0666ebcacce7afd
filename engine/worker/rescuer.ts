import { systemClock, type Clock } from '../clock.ts';
import { PeriodicLoop } from '../periodic.ts';
import type { Db } from '../db.ts';
import { DEFAULTS } from '../defaults.ts';
import { Events } from '../events.ts';
import { createLogger, type Logger } from '../log.ts';
import { checkComponentOptions, keysOf, validateInt } from '../validate.ts';
import { rescuerQueries as q } from './queries.ts';

export interface LeaseRescuerOptions {
  db: Db;
  /** Period between passes. Default 1,000 ms. */
  intervalMs?: number;
  /** Expired leases handled per statement. Default 1,000. */
  batchSize?: number;
  /** Expired leases (crashes) before a job is dead-lettered as a poison pill. Default 2. */
  maxCrashes?: number;
  /** After a Postgres restart, how long a silent lease holder still counts as possibly alive, ms. Default 10,000. */
  restartGraceMs?: number;
  clock?: Clock;
  events?: Events;
  log?: Logger;
  /** Called after a pass that rescued anything (the rescued jobs are now suspects). */
  onRescued?: (count: number) => void;
}

export const RESCUER_OPTIONS = keysOf<LeaseRescuerOptions>()(['db', 'intervalMs', 'batchSize', 'maxCrashes', 'restartGraceMs', 'clock', 'events', 'log', 'onRescued']);

/** Checks a rescuer's options before it touches the database; throws ValidationError naming the field. */
function validateRescuerOptions(o: LeaseRescuerOptions): void {
  checkComponentOptions(o, RESCUER_OPTIONS, 'LeaseRescuer');
  if (o.intervalMs !== undefined) validateInt(o.intervalMs, 'intervalMs', 1);
  if (o.batchSize !== undefined) validateInt(o.batchSize, 'batchSize', 1);
  if (o.maxCrashes !== undefined) validateInt(o.maxCrashes, 'maxCrashes', 1);
  if (o.restartGraceMs !== undefined) validateInt(o.restartGraceMs, 'restartGraceMs', 0);
}

/**
 * Makes the jobs of dead workers claimable again. A lease that expired
 * without a recorded result means the worker died, or is alive but lost the
 * lease (it stalled past its visibility timeout, or could not reach the
 * database to renew or to record its result). The attempt it was charged at
 * claim stays charged either way; a crash is counted only when the holder is
 * dead by its own liveness row (stampede.workers), so a job that kills every
 * worker that touches it is dead-lettered after `maxCrashes`, while a Postgres
 * restart under a healthy fleet convicts no one. Runs on every worker; SKIP
 * LOCKED lets several share the work safely.
 */
export class LeaseRescuer {
  private readonly events: Events;
  private readonly loop: PeriodicLoop<number>;

  constructor(private readonly options: LeaseRescuerOptions) {
    validateRescuerOptions(options);
    this.events = options.events ?? new Events();
    this.loop = new PeriodicLoop({
      clock: options.clock ?? systemClock,
      log: options.log ?? createLogger('rescuer'),
      what: 'rescue pass',
      intervalMs: options.intervalMs ?? DEFAULTS.rescueIntervalMs,
      runOnce: () => this.runOnce(),
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One pass: rescues every expired lease, in batches. Returns how many it rescued. */
  async runOnce(): Promise<number> {
    const batch = this.options.batchSize ?? 1000;
    let total = 0;
    for (;;) {
      const res = await this.options.db.query(q.RescueExpiredLeases, [
        batch,
        this.options.maxCrashes ?? DEFAULTS.maxCrashes,
        this.options.restartGraceMs ?? DEFAULTS.restartGraceMs,
      ]);
      for (const r of res.rows) {
        const dead = r.state === 'dead';
        this.events.emit('lease:rescued', {
          jobId: r.id,
          queue: r.queue,
          attempts: r.attempts,
          crashCount: r.crash_count,
          dead,
          crashed: r.crashed,
          owner: r.owner,
          dbRescuedAt: (r.db_now as Date).getTime(),
          dbLeaseExpiredAt: (r.expired_at as Date).getTime(),
        });
        if (dead) this.events.emit('job:dead', { jobId: r.id, queue: r.queue, attempt: r.attempts, reason: r.reason });
      }
      total += res.rowCount ?? 0;
      if ((res.rowCount ?? 0) < batch) {
        if (total > 0) this.options.onRescued?.(total);
        return total;
      }
    }
  }
}
