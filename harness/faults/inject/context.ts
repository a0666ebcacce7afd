import type { Clock } from '../../../engine/clock.ts';
import type { Db } from '../../../engine/db.ts';
import type { Logger } from '../../../engine/log.ts';
import type { PostgresServer } from '../../postgres/provision.ts';
import type { Replica } from '../../postgres/replica.ts';
import type { HistoryEvent } from '../../history.ts';
import type { ComponentNodes } from '../../runner/component-nodes.ts';
import type { DashboardClient } from '../../runner/dashboard-client.ts';
import type { Fleet } from '../../runner/fleet.ts';
import type { LoadGenerator } from '../../runner/generator.ts';
import type { OutboxSink } from '../../runner/outbox-sink.ts';
import type { LinkNet } from '../../runner/links.ts';
import type { HistoryRecorder } from '../../runner/recorder.ts';
import type { RunSampler } from '../../runner/sampler.ts';
import type { FaultAction } from '../plan.ts';
import type { PeerProducer } from '../../engines/types.ts';
import type { ControlCli } from '../../runner/control-cli.ts';

/** What a fault injector may touch. Only injectors and the runner touch processes, the server and clocks. */
export interface InjectionContext {
  db: Db;
  url: string;
  /** How operator faults `via: 'cli'` run `stampede control`: its entry (a source path, run compiled) and the arguments before the command. */
  controlCli: ControlCli;
  /** How the dashboard-cli fault runs `stampede dashboard`: its entry and the arguments before its flags. */
  dashboardCli: ControlCli;
  server: PostgresServer;
  fleet: Fleet;
  /** The load generator, which a fault may silence for a moment (a lull before a crash). */
  load: Pick<LoadGenerator, 'silence'>;
  /** The relay and archiver processes (none unless the scenario runs them). */
  components: ComponentNodes;
  /** The run's dashboard, as an operator's browser reaches it, when an operator fault goes through it. */
  dashboard?: DashboardClient;
  /** The link proxies between the workers (and the nemesis's producer) and Postgres, when the scenario has link faults. */
  links?: LinkNet;
  /** The streaming replica of the run's server and the VIP every client connects through, when the scenario has a failover. */
  replica?: Replica;
  /** The outbox sink the relays deliver to, when the scenario runs relays. */
  sink?: OutboxSink;
  /**
   * A peer run's producer (harness/engines/): the jobs a fault enqueues (poison, a herd) go through the
   * peer's own enqueue into its tables. Unset in stampede's runner, whose faults enqueue through stampede's API.
   */
  producer?: PeerProducer;
  recorder: HistoryRecorder;
  sampler: RunSampler;
  clock: Clock;
  log: Logger;
  /** Attempt budget of jobs the nemesis enqueues. */
  maxAttempts: number;
  /** The first lane's queue: where poison and herds go unless the fault names one. */
  defaultQueue: string;
  /** Aborted when the run is interrupted: lasting faults end early and clean up. */
  signal: AbortSignal;
}

/** Carries out one planned fault action, recording it and, when it bites, its evidence. */
export type Injector = (action: FaultAction, ctx: InjectionContext) => Promise<void>;

/** Records the injection: now, or at `atT` (recorder time) when it began earlier and could be seen before it returned. */
export function injected(ctx: InjectionContext, action: FaultAction, detail: Record<string, unknown>, atT?: number): void {
  ctx.recorder.recordAt({ type: 'fault:injected', node: 'nemesis', fault: action.fault, detail: { seq: action.seq, ...detail } }, atT ?? ctx.recorder.now());
}

export function evidence(ctx: InjectionContext, action: FaultAction, detail: Record<string, unknown>): void {
  ctx.recorder.record({ type: 'fault:evidence', node: 'nemesis', fault: action.fault, detail: { seq: action.seq, ...detail } });
}

/**
 * Resolves with the first recorded event that satisfies `match` within
 * `timeoutMs`, or null: how an injector learns its fault bit (the poison was
 * claimed, the node materialized after its clock jumped).
 */
export function watchFor(ctx: InjectionContext, match: (e: HistoryEvent) => boolean, timeoutMs: number): Promise<HistoryEvent | null> {
  // A node's report can be recorded before the injector starts watching (its IPC message was handled
  // while the injector awaited the database), so what is already in the history counts too.
  const past = ctx.recorder.events.find(match);
  if (past) return Promise.resolve(past);
  return new Promise((resolve) => {
    const stop = new AbortController();
    const off = ctx.recorder.onEvent((e) => {
      if (!match(e)) return;
      off();
      stop.abort();
      resolve(e);
    });
    ctx.clock.sleep(timeoutMs, AbortSignal.any([stop.signal, ctx.signal])).then(
      () => {
        off();
        resolve(null);
      },
      () => {
        off();
        resolve(null);
      },
    );
  });
}

/** Sleeps until a lasting fault's end (or the run's interruption). */
export async function holdUntil(ctx: InjectionContext, action: FaultAction, startedT: number): Promise<void> {
  const ms = (action.untilMs ?? action.atMs) - action.atMs - (ctx.recorder.now() - startedT);
  await ctx.clock.sleep(Math.max(0, ms), ctx.signal).catch(() => {});
}
