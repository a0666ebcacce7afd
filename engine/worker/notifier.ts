import { backoffCeilingMs, RECONNECT_BACKOFF } from './backoff.ts';
import { workerQueries } from './queries.ts';
import type pg from 'pg';
import type { Clock } from '../clock.ts';
import type { Db } from '../db.ts';
import type { Logger } from '../log.ts';

/**
 * Holds a LISTEN connection on the `stampede_jobs` channel and calls `onNotify`
 * when jobs are enqueued. If the connection drops (a terminated backend, a
 * Postgres restart) it reconnects with backoff; meanwhile the worker's poll
 * interval bounds the delay, so nothing is missed, only later.
 */
export class EnqueueListener {
  private client?: pg.Client;
  private running = false;
  private loop?: Promise<void>;
  private stopController = new AbortController();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly onNotify: () => void,
    private readonly onListening: () => void = () => {},
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopController = new AbortController();
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopController.abort();
    await this.client?.end().catch(() => {});
    await this.loop;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      try {
        const client = await this.db.connectDedicated();
        this.client = client;
        // stop() came while this connection was being made: it ended the previous client (or none), not this one.
        if (!this.running) {
          await client.end().catch(() => {});
          break;
        }
        const closed = new Promise<void>((resolve) => {
          client.once('end', resolve);
          client.once('error', () => resolve());
        });
        client.on('notification', () => this.onNotify());
        await client.query(workerQueries.ListenForEnqueues);
        failures = 0;
        this.onListening();
        this.onNotify(); // anything enqueued while we were not listening
        await closed;
        if (this.running) this.log.warn('LISTEN connection lost; reconnecting');
      } catch (err) {
        failures++;
        if (this.running) this.log.warn('LISTEN connect failed', { attempt: failures, error: (err as Error).message });
      }
      if (!this.running) break;
      await this.clock.sleep(backoffCeilingMs(failures + 1, RECONNECT_BACKOFF), this.stopController.signal).catch(() => {});
    }
  }
}
