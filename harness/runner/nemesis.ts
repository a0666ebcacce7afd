import type { Clock } from '../../engine/clock.ts';
import type { Logger } from '../../engine/log.ts';
import { INJECTORS, type InjectionContext } from '../faults/inject/index.ts';
import type { FaultAction } from '../faults/plan.ts';
import { controlCliOf } from './control-cli.ts';
import { dashboardCliOf } from './dashboard-cli.ts';
import type { Scenario } from '../scenario.ts';

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

/** What a runner hands its nemesis: its parts; the rest of the context comes from the scenario. */
export type NemesisParts = Omit<InjectionContext, 'log' | 'maxAttempts' | 'defaultQueue' | 'signal' | 'controlCli' | 'dashboardCli'>;

/**
 * The fault timeline of a run, as every runner (stampede's, a peer's) sets it
 * up: jobs the nemesis enqueues get the scenario's attempt budget and go to
 * its first lane; lasting faults end at the interrupt or when `faultsOver`
 * aborts (the drain is over).
 */
export function nemesisFor(s: Scenario, actions: readonly FaultAction[], parts: NemesisParts, log: Logger, interrupt: AbortSignal) {
  const faultsOver = new AbortController();
  const nemesis = new Nemesis(
    actions,
    {
      ...parts,
      log,
      maxAttempts: s.engine.maxAttempts,
      defaultQueue: s.lanes[0].queue,
      controlCli: controlCliOf(s.engine.mutant),
      dashboardCli: dashboardCliOf(s.engine.mutant),
      signal: AbortSignal.any([interrupt, faultsOver.signal]),
    },
    parts.clock,
    log,
  );
  return { nemesis, faultsOver };
}

/**
 * The drain: until `drainTimeoutS` has passed, waits while the faults settle
 * (an outage may still be on) and then until `drained()` answers a value
 * (what the runner wants to keep of it) every 250 ms; the faults end when it
 * does. Resolves to that value, or undefined at the deadline or the interrupt.
 */
export async function drainWhileSettling<T>(
  s: Scenario,
  nemesis: Nemesis,
  faultsOver: AbortController,
  clock: Clock,
  interrupt: AbortSignal,
  drained: () => Promise<T | undefined>,
): Promise<T | undefined> {
  const drainUntil = clock.now() + s.drainTimeoutS * 1000;
  let settled = false;
  let result: T | undefined;
  const settling = nemesis.settle().then(() => (settled = true));
  while (!interrupt.aborted && clock.now() < drainUntil) {
    if (settled && (result = await drained()) !== undefined) break;
    await clock.sleep(250, interrupt).catch(() => {});
  }
  faultsOver.abort();
  await settling;
  return result;
}
