import type { Clock } from '../../engine/clock.ts';

/** Calls `phase()` every `everyMs` of the clock until stop(); the progress line's heartbeat. */
export class Ticker {
  private readonly stopController = new AbortController();

  constructor(
    private readonly clock: Clock,
    private readonly everyMs: number,
    public phase: () => void,
  ) {
    void this.loop();
  }

  stop(): void {
    this.stopController.abort();
  }

  private async loop(): Promise<void> {
    while (!this.stopController.signal.aborted) {
      try {
        await this.clock.sleep(this.everyMs, this.stopController.signal);
      } catch {
        return;
      }
      this.phase();
    }
  }
}
