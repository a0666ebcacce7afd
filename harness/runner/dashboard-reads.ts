import type { Clock } from '../../engine/clock.ts';
import type { Logger } from '../../engine/log.ts';
import type { DashboardClient } from './dashboard-client.ts';
import type { HistoryRecorder } from './recorder.ts';

/**
 * A tab left open on the dashboard's queues page through the run: every
 * `everyMs` it reads the page and records which round it showed, the elected
 * sampler's or one of its own (`dashboard:queues`), beside the rounds the
 * sampler wrote (`sampler:round`): dashboard-shows-fresh-round judges the
 * choice, dashboard-slo-mark each queue's SLO mark, and a page that answered
 * an error (`dashboard:queues-failed`) is recorded with when it answered, for
 * dashboard-page-timeout. One read at a time; a read that could not be made
 * (no answer) is logged and the next one tried.
 */
export class QueuesPageReads {
  private readonly stopController = new AbortController();
  private readonly loop: Promise<void>;

  constructor(
    private readonly client: DashboardClient,
    /** The server's DashboardServer.sharedRoundMaxAgeMs, recorded with each read. */
    private readonly maxAgeMs: number,
    private readonly recorder: HistoryRecorder,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly everyMs = 2_000,
  ) {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopController.signal.aborted) {
      const sentAt = this.recorder.now();
      try {
        const read = await this.client.readQueues();
        if ('status' in read) this.recorder.record({ type: 'dashboard:queues-failed', node: 'dashboard', sentAt, ...read });
        else this.recorder.record({ type: 'dashboard:queues', node: 'dashboard', sentAt, maxAgeMs: this.maxAgeMs, ...read });
      } catch (err) {
        this.log.warn('could not read the queues page', { error: (err as Error).message });
      }
      try {
        await this.clock.sleep(this.everyMs, this.stopController.signal);
      } catch {
        return;
      }
    }
  }
}
