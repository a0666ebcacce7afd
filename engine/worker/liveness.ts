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
   * Announces a new incarnation of this worker id (see StartWorker). The worker
   * calls it before its first claim, so every lease it takes is written after it.
   */
  async begin(): Promise<void> {
    await this.db.query(q.StartWorker, [this.workerId, this.intervalMs * LIVENESS_PERIODS_TO_DEATH]);
  }

  /** One renewal. */
  async runOnce(): Promise<void> {
    await this.db.query(q.TouchWorker, [this.workerId, this.intervalMs * LIVENESS_PERIODS_TO_DEATH]);
  }
}
