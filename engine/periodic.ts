import { backoffCeilingMs, RECONNECT_BACKOFF } from './worker/backoff.ts';
import type { Clock } from './clock.ts';
import type { Logger } from './log.ts';

export interface PeriodicLoopOptions<R> {
  clock: Clock;
  log: Logger;
  /** Names the work in log lines ("rescue pass", "relay pass"). */
  what: string;
  /** Pause between passes, ms. */
  intervalMs: number;
  /** One pass of the work. */
  runOnce: () => Promise<R>;
  /** True when the pass suggests more work is waiting (a full batch): go again without pausing. */
  again?: (result: R) => boolean;
}

/**
 * The loop every background component shares (lease rescuer, outbox relay,
 * pruner, samplers): a pass, then a pause on the injected clock; an error is
 * logged and retried after a backoff that doubles up to 5 s, never thrown, so
 * a dropped connection costs a pass, not the process. start() and stop() are
 * idempotent; stop() waits for the pass in flight.
 */
export class PeriodicLoop<R = unknown> {
  private loop: Promise<void> | null = null;
  private stopController = new AbortController();

  constructor(private readonly options: PeriodicLoopOptions<R>) {}

  get running(): boolean {
    return this.loop !== null;
  }

  start(): void {
    if (this.loop) return;
    this.stopController = new AbortController();
    this.loop = this.run(this.stopController.signal);
  }

  async stop(): Promise<void> {
    if (!this.loop) return;
    this.stopController.abort();
    await this.loop;
    this.loop = null;
  }

  private async run(signal: AbortSignal): Promise<void> {
    const { clock, log, what, intervalMs, runOnce, again } = this.options;
    let failures = 0;
    while (!signal.aborted) {
      let pauseMs = intervalMs;
      try {
        const result = await runOnce();
        failures = 0;
        if (again?.(result)) continue;
      } catch (err) {
        failures++;
        pauseMs = backoffCeilingMs(failures + 1, RECONNECT_BACKOFF);
        log.warn(`${what} failed; will retry`, { attempt: failures, error: (err as Error).message });
      }
      await clock.sleep(pauseMs, signal).catch(() => {});
    }
  }
}
