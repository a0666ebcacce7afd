import type { Clock } from '../clock.ts';
import type { Db } from '../db.ts';
import type { Logger } from '../log.ts';
import { PeriodicLoop } from '../periodic.ts';
import { livenessQueries as q } from './queries.ts';

/** Silent for this many liveness periods, a worker is presumed dead. */
export const LIVENESS_PERIODS_TO_DEATH = 3;

/**
 * The worker's own liveness, apart from its leases: its row in
 * stampede.workers is renewed every `intervalMs`. The lease rescuer charges an
 * expired lease as a crash only when this row says the holder is dead (see
 * RescueExpiredLeases), so a live worker that merely lost its connection is
 * never taken for a crashed one.
 */
export class WorkerLiveness {
  private readonly loop: PeriodicLoop<void>;
  /** The announcement of this incarnation: made once, before any renewal and any claim. */
  private announced?: Promise<void>;

  constructor(
    private readonly db: Db,
    private readonly workerId: string,
    clock: Clock,
    log: Logger,
    private readonly intervalMs: number,
  ) {
    this.loop = new PeriodicLoop({ clock, log, what: 'liveness renewal', intervalMs, runOnce: () => this.runOnce() });
  }

  start(): void {
    this.loop.start();
  }

  /** Stops renewing and deletes the row: a worker that stopped cleanly is not alive. */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.db.query(q.ForgetWorker, [this.workerId]).catch(() => {}); // left behind, it expires by itself
  }

  /**
   * Announces a new incarnation of this worker id (see StartWorker), once: the worker awaits it before its first claim,
   * and every renewal waits for it, so every lease this process takes and every sign of life it gives is written after
   * it. A renewal ahead of it would refresh the earlier incarnation's row: a rescuer reading the row between the two
   * would take that dead process's expired leases for a live holder's, and charge no crash. A failed announcement is
   * tried again by the next caller.
   */
  begin(): Promise<void> {
    this.announced ??= this.db.query(q.StartWorker, [this.workerId, this.intervalMs * LIVENESS_PERIODS_TO_DEATH]).then(
      () => {},
      (err) => {
        this.announced = undefined;
        throw err;
      },
    );
    return this.announced;
  }

  /** One renewal. */
  async runOnce(): Promise<void> {
    await this.begin();
    await this.db.query(q.TouchWorker, [this.workerId, this.intervalMs * LIVENESS_PERIODS_TO_DEATH]);
  }
}
