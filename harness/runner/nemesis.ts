import type { Clock } from '../../engine/clock.ts';
import type { Logger } from '../../engine/log.ts';
import { INJECTORS, type InjectionContext } from '../faults/inject/index.ts';
import type { FaultAction } from '../faults/plan.ts';

/**
 * Follows the fault timeline: each planned action starts at its time (ms
 * after the load started), without waiting for earlier lasting faults to
 * end. An injector that throws is logged and recorded; the run goes on.
 */
export class Nemesis {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly actions: readonly FaultAction[],
    private readonly ctx: InjectionContext,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  async run(loadStartT: number): Promise<void> {
    for (const action of this.actions) {
      const waitMs = loadStartT + action.atMs - this.ctx.recorder.now();
      if (waitMs > 0) await this.clock.sleep(waitMs, this.ctx.signal).catch(() => {});
      if (this.ctx.signal.aborted) break;
      const p = INJECTORS[action.fault](action, this.ctx)
        .catch((err) => {
          this.log.warn('fault injection failed', { fault: action.fault, seq: action.seq, error: (err as Error).message });
          this.ctx.recorder.record({ type: 'fault:injected', node: 'nemesis', fault: action.fault, detail: { seq: action.seq, error: (err as Error).message } });
        })
        .finally(() => this.running.delete(p));
      this.running.add(p);
    }
  }

  /** Waits for lasting faults (outages, holds, stops) to end and their evidence to be collected. */
  async settle(): Promise<void> {
    while (this.running.size) await Promise.all(this.running);
  }
}
