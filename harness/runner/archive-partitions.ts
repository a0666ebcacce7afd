import type { Clock } from '../../engine/clock.ts';
import type { Db } from '../../engine/db.ts';
import type { Logger } from '../../engine/log.ts';
import { PeriodicLoop } from '../../engine/periodic.ts';
import { harnessQueries as q } from './queries.ts';
import type { HistoryRecorder } from './recorder.ts';

/**
 * The harness's own record of the archive's day partitions: once a second it
 * reads stampede.job_history's partitions from the catalog (ArchivePartitions)
 * into an `archive:partitions` event, and `stop()` takes one more reading,
 * which the runner calls once the archiver has stopped (its last pass, create
 * and drop, finished). archive-retention judges what the archiver kept and
 * dropped from these readings, not from what the archiver says it did.
 */
export class PartitionReads {
  private readonly loop: PeriodicLoop<void>;

  constructor(
    private readonly db: Db,
    clock: Clock,
    private readonly recorder: HistoryRecorder,
    log: Logger,
    intervalMs = 1000,
  ) {
    this.loop = new PeriodicLoop({ clock, log, what: 'partition read', intervalMs, runOnce: () => this.readOnce() });
  }

  start(): void {
    this.loop.start();
  }

  /** Stops the loop, then reads once more: after the archiver stopped, this is the partitions at rest. */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.readOnce();
  }

  private async readOnce(): Promise<void> {
    const r = (await this.db.query(q.ArchivePartitions)).rows[0];
    this.recorder.record({ type: 'archive:partitions', node: 'harness', dbTime: (r.db_now as Date).getTime(), partitions: r.partitions as string[] });
  }
}
