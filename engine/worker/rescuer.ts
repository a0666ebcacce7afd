import { systemClock, type Clock } from '../clock.ts';
import { PeriodicLoop } from '../periodic.ts';
import type { Db } from '../db.ts';
import { Events } from '../events.ts';
import { createLogger, type Logger } from '../log.ts';
import { declareOptions, validateDeclared } from '../options/declare.ts';
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

/** The rescuer's options, declared once (engine/options/declare.ts derives the rest). */
export const RESCUER = declareOptions<LeaseRescuerOptions>()(
  'LeaseRescuer',
  {
    intervalMs: { type: 'int', min: 1, unit: 'ms', default: 1_000, doc: 'period between passes that look for expired claims' },
    batchSize: { type: 'int', min: 1, unit: 'rows', default: 1_000, doc: 'expired leases handled per statement' },
    maxCrashes: { type: 'int', min: 1, unit: 'crashes', default: 2, doc: 'expired leases with no recorded failure before a job is dead-lettered as a poison pill' },
    restartGraceMs: {
      type: 'int', min: 0, unit: 'ms', default: 10_000,
      doc: 'after a Postgres restart, how long live workers get to reconnect before their silence convicts them of a crash',
    },
  },
  ['db', 'clock', 'events', 'log', 'onRescued'],
);

export const RESCUER_OPTIONS = RESCUER.names;

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
    validateDeclared(RESCUER, options);
    this.events = options.events ?? new Events();
    this.loop = new PeriodicLoop({
      clock: options.clock ?? systemClock,
      log: options.log ?? createLogger('rescuer'),
      what: 'rescue pass',
      intervalMs: options.intervalMs ?? RESCUER.defaults.intervalMs,
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
    const batch = this.options.batchSize ?? RESCUER.defaults.batchSize;
    let total = 0;
    for (;;) {
      const res = await this.options.db.query(q.RescueExpiredLeases, [
        batch,
        this.options.maxCrashes ?? RESCUER.defaults.maxCrashes,
        this.options.restartGraceMs ?? RESCUER.defaults.restartGraceMs,
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
        if (dead) this.events.emit('job:dead', { jobId: r.id, queue: r.queue, attempt: r.attempts, code: r.dead_code, reason: r.reason });
      }
      total += res.rowCount ?? 0;
      if ((res.rowCount ?? 0) < batch) {
        if (total > 0) this.options.onRescued?.(total);
        return total;
      }
    }
  }
}
