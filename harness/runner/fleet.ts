import type { Clock } from '../../engine/clock.ts';
import { CRON } from '../../engine/cron/materializer.ts';
import { Events } from '../../engine/events.ts';
import { optionArgv } from '../../engine/options/declare.ts';
import { WORKER } from '../../engine/worker/options.ts';
import { foldLogLines, type Logger } from '../../engine/log.ts';
import { resolve } from 'node:path';
import { compiledEntry } from '../../engine/supervisor/compiled-entry.ts';
import { NodeProcess } from '../../engine/supervisor/node-process.ts';
import { ProcessSupervisor } from '../../engine/supervisor/supervisor.ts';
import { MUTANT_SCHEDULER_SCRIPT, MUTANT_WORKER_SCRIPT, mutantRunsIn } from '../mutants/index.ts';
import { BASE_SCENARIO, engineSettingsFor, schedulerNodeOptions, workerFlagSettings, type Scenario, type SchedulerNode } from '../scenario.ts';
import { redCounts } from './metrics-scrape.ts';
import type { EventMessage } from '../../engine/supervisor/event-message.ts';
import type { WorkerReports } from '../handlers.ts';
import { fromReport, isRecorded, slotIdOf } from '../history.ts';
import type { HistoryRecorder, Recordable } from './recorder.ts';
import type { WorkerProcessSpec } from '../engines/types.ts';

/**
 * The system under test as real OS processes: a supervised set of worker
 * processes (a crashed one is restarted, as in production) and the scheduler
 * nodes, each with its own clock. Everything they report goes into the history.
 */
/** How long a worker told to stop (SIGTERM: a `worker-restart`, the run's end) lets its jobs run before it hands back the rest: stampede's and the peers' alike. */
export const WORKER_SHUTDOWN_GRACE_MS = 2_000;

export class Fleet {
  readonly supervisor: ProcessSupervisor<NodeProcess<WorkerReports>>;
  readonly schedulers: NodeProcess[] = [];
  /** Jobs in flight per worker slot, from its own events: a kill with none in flight proves nothing. */
  readonly inFlight = new Map<number, Set<number>>();
  /** Each scheduler node's clock offset from the harness clock, ms. */
  readonly schedulerSkewMs: number[];
  private readonly generation = new Map<number, number>();
  /**
   * The nodes' own log lines, relayed with repeats folded across restarts of a slot (`worker-0.1`,
   * `worker-0.2`, ... count as one scope): a crash loop restarts a worker every few seconds, and each
   * start would otherwise print the same warnings again.
   */
  private readonly relayLog = foldLogLines({ scopeOf: (scope) => scope.replace(/(worker-\d+)\.\d+/, '$1') });
  private readonly current = new Map<number, NodeProcess<WorkerReports>>();
  /** Each live worker's /metrics, by slot, from its ready message: what the run's Prometheus scrapes. */
  private readonly endpoints = new Map<number, { workerId: string; pid: number; port: number }>();
  /** The history's name of each worker process (`worker-<slot>.<generation>`), whatever worker id it runs under. */
  private readonly processIds = new Map<NodeProcess<WorkerReports>, string>();
  /** reuseWorkerIds: the process that last claimed each job, by job id: the holder a rescue's `owner` names. */
  private readonly claimedBy = new Map<number, string>();

  constructor(
    private readonly scenario: Scenario,
    private readonly url: string,
    private readonly recorder: HistoryRecorder,
    clock: Clock,
    private readonly log: Logger,
    private readonly seed: number,
    /** More environment for every worker process (the downstream's URL). */
    private readonly workerEnv: Record<string, string> = {},
    /** The database URL a worker slot connects to: through its link proxy when the scenario has link faults (runner/links.ts). */
    private readonly workerUrl: (slot: number) => string = () => url,
    /** Another engine's worker process for a slot (a peer's, harness/engines/); default: stampede's bin/worker.ts. */
    private readonly peerWorker?: (slot: number, gen: number) => WorkerProcessSpec,
  ) {
    const events = new Events();
    this.supervisor = new ProcessSupervisor({
      processes: scenario.workers,
      spawn: (slot) => this.spawnWorker(slot),
      restart: { baseMs: 200, capMs: 5_000, stableMs: 5_000 },
      events,
      clock,
      log: log.child('supervisor'),
    });
    events.on('process:started', (e) => recorder.record({ type: 'process:started', node: `worker-${e.slot}`, pid: e.pid, role: 'worker' }));
    events.on('process:exited', (e) => {
      this.inFlight.set(e.slot, new Set());
      if (this.endpoints.get(e.slot)?.pid === e.pid) this.endpoints.delete(e.slot);
      recorder.record({
        type: 'process:exited',
        node: `worker-${e.slot}`,
        pid: e.pid,
        role: 'worker',
        code: e.code,
        signal: e.signal,
        expected: e.restartInMs === null,
      });
    });
    this.schedulerSkewMs = scenario.scheduler.nodes.map((n) => n.skewMs);
  }

  start(): void {
    this.supervisor.start();
    this.scenario.scheduler.nodes.forEach((node, i) => this.schedulers.push(this.spawnScheduler(i, node)));
  }

  /** A scheduler node's declared settings. */
  schedulerNode(index: number): SchedulerNode {
    return this.scenario.scheduler.nodes[index];
  }

  /** The live worker process in a slot, if any. */
  worker(slot: number): NodeProcess<WorkerReports> | undefined {
    const p = this.current.get(slot);
    return p?.alive ? p : undefined;
  }

  /** Every live worker's RED counters, from its own /metrics, into the history (red-metrics judges them). */
  async scrapeMetrics(): Promise<void> {
    const live = [...this.current.values()].filter((p) => p.alive);
    await Promise.all(
      live.map(async (p) => {
        const ready = await p.ready.catch(() => null);
        if (!ready?.workerId || ready.metricsPort === undefined) return;
        const workerId = this.historyId(ready.workerId, this.processIds.get(p) ?? ready.workerId);
        try {
          const res = await fetch(`http://127.0.0.1:${ready.metricsPort}/metrics`, { signal: AbortSignal.timeout(2_000) });
          const red = redCounts(await res.text());
          this.recorder.record({ type: 'metrics:scraped', node: 'harness', workerId, red });
        } catch (err) {
          this.log.warn("could not read a worker's /metrics", { workerId: ready.workerId, error: (err as Error).message });
        }
      }),
    );
  }

  /** The /metrics of every live worker process that has said where it serves it. */
  metricsEndpoints(): { workerId: string; port: number }[] {
    return [...this.endpoints.values()].map(({ workerId, port }) => ({ workerId, port }));
  }

  private stoppingSchedulers = false;

  async stopSchedulers(): Promise<void> {
    this.stoppingSchedulers = true;
    await Promise.all(this.schedulers.map((s) => s.stop(5_000)));
  }

  async stop(): Promise<void> {
    await this.stopSchedulers();
    await this.supervisor.stop(10_000);
  }

  private spawnWorker(slot: number): NodeProcess<WorkerReports> {
    const gen = (this.generation.get(slot) ?? 0) + 1;
    this.generation.set(slot, gen);
    const peer = this.peerWorker?.(slot, gen);
    const proc = peer
      ? new NodeProcess<WorkerReports>({
          ...peer,
          env: { ...peer.env, DATABASE_URL: this.workerUrl(slot), STAMPEDE_LOG: process.env.STAMPEDE_LOG ?? 'warn' },
          stderr: 'lines',
          onStderrLine: this.relayLog,
        })
      : this.spawnStampedeWorker(slot, gen);
    this.current.set(slot, proc);
    const processId = `worker-${slot}.${gen}`;
    this.processIds.set(proc, processId);
    proc.ready.then(
      (r) => r.workerId && r.metricsPort !== undefined && proc.alive && this.endpoints.set(slot, { workerId: this.historyId(r.workerId, processId), pid: r.pid, port: r.metricsPort }),
      () => {},
    );
    const flying = new Set<number>();
    this.inFlight.set(slot, flying);
    proc.onEvent = (m) => this.onWorkerEvent(`worker-${slot}`, flying, this.translated(m, processId));
    return proc;
  }

  /** The worker id a slot's processes run under: the slot's own with reuseWorkerIds, else one per process. */
  private engineId(slot: number, gen: number): string {
    return this.scenario.reuseWorkerIds ? `worker-${slot}` : `worker-${slot}.${gen}`;
  }

  /** The history's name for the process that reported `workerId`: with reuseWorkerIds, the process itself, else the id as given. */
  private historyId(workerId: string, processId: string): string {
    return this.scenario.reuseWorkerIds && workerId === slotIdOf(processId) ? processId : workerId;
  }

  /**
   * A report with the worker ids in it named as the history names processes (reuseWorkerIds): the reporter's own
   * `workerId` becomes its process; a rescue's `owner`, the slot's id as the database holds it, becomes the process
   * of that slot that last claimed the job. Without reuseWorkerIds every id already names one process.
   */
  private translated(m: EventMessage<WorkerReports>, processId: string): EventMessage<WorkerReports> {
    if (!this.scenario.reuseWorkerIds) return m;
    const payload = m.payload as { workerId?: unknown; owner?: unknown; jobId?: unknown };
    const out: Record<string, unknown> = { ...payload };
    if (typeof payload.workerId === 'string') out.workerId = this.historyId(payload.workerId, processId);
    if (m.name === 'job:claimed' && typeof payload.jobId === 'number') this.claimedBy.set(payload.jobId, out.workerId as string);
    if (m.name === 'lease:rescued' && typeof payload.owner === 'string' && typeof payload.jobId === 'number') {
      const holder = this.claimedBy.get(payload.jobId);
      if (holder !== undefined && slotIdOf(holder) === payload.owner) out.owner = holder;
    }
    return { ...m, payload: out } as EventMessage<WorkerReports>;
  }

  private spawnStampedeWorker(slot: number, gen: number): NodeProcess<WorkerReports> {
    const e = engineSettingsFor(this.scenario, slot);
    const args = [
      '--handlers', handlersModule(this.scenario.handlers),
      ...optionArgv(WORKER, { concurrency: this.scenario.concurrency, ...workerFlagSettings(e), shutdownGraceMs: WORKER_SHUTDOWN_GRACE_MS }),
      ...(e.preparedStatements ? [] : ['--no-prepared-statements']),
      '--worker-id', this.engineId(slot, gen),
      '--seed', `${this.seed}/worker-${slot}.${gen}`,
      // /metrics on a port of the system's choosing (the ready message names it): red-metrics reads it.
      '--metrics-port', '0',
      // The workers elect one queue-state sampler between them; its rounds are read back after the run (one-round-per-interval).
      ...(this.scenario.sampleQueueState ? ['--sample-queue-state'] : []),
    ];
    const proc = new NodeProcess<WorkerReports>({
      // A mutant runs through the harness's own entry, which applies it and then runs bin/worker.ts.
      script: mutantRunsIn(e.mutant) === 'worker' ? MUTANT_WORKER_SCRIPT : 'bin/worker.ts',
      args: mutantRunsIn(e.mutant) === 'worker' ? ['--mutant', e.mutant!, ...args] : args,
      env: {
        DATABASE_URL: this.workerUrl(slot),
        STAMPEDE_QUEUES: this.scenario.lanes.map((l) => l.queue).join(','),
        STAMPEDE_HARNESS_DEPENDENCY: this.scenario.faults.some((f) => f.fault === 'dependency-outage') ? '1' : '0',
        STAMPEDE_HARNESS_OTEL: this.scenario.otel ? '1' : '0',
        STAMPEDE_LOG: process.env.STAMPEDE_LOG ?? 'warn',
        ...this.workerEnv,
      },
      stderr: 'lines',
      onStderrLine: this.relayLog,
    });
    return proc;
  }

  private onWorkerEvent(node: string, flying: Set<number>, m: EventMessage<WorkerReports>): void {
    const { nodeTime, hostTime } = m;
    if (m.name === 'job:claimed') flying.add(m.payload.jobId);
    if (m.name === 'job:completed' || m.name === 'job:failed' || m.name === 'lease:lost') flying.delete(m.payload.jobId);
    if (m.name === 'fault:bit') {
      this.recorder.recordReported({ type: 'fault:evidence', node, nodeTime, fault: m.payload.fault, detail: { ...m.payload } }, hostTime);
      return;
    }
    if (isRecorded(m.name)) this.recorder.recordReported({ node, nodeTime, ...fromReport(m.name, m.payload as never) } as Recordable, hostTime);
  }

  private spawnScheduler(index: number, settings: SchedulerNode): NodeProcess {
    const node = `scheduler-${index}`;
    const skewMs = settings.skewMs;
    const mutant = this.scenario.engine.mutant;
    const broken = mutantRunsIn(mutant) === 'scheduler';
    const proc = new NodeProcess({
      script: broken ? MUTANT_SCHEDULER_SCRIPT : 'bin/scheduler.ts',
      args: [
        ...(broken ? ['--mutant', mutant!] : []),
        '--node-id', node,
        ...optionArgv(CRON, schedulerNodeOptions(settings)),
      ],
      env: { DATABASE_URL: this.url, STAMPEDE_CLOCK_SKEW_MS: String(skewMs), STAMPEDE_LOG: process.env.STAMPEDE_LOG ?? 'warn' },
      stderr: 'lines',
      onStderrLine: this.relayLog,
    });
    proc.onEvent = (m) => {
      if (m.name === 'cron:materialized' || m.name === 'cron:refused') this.recorder.recordReported({ node, nodeTime: m.nodeTime, ...fromReport(m.name, m.payload) } as Recordable, m.hostTime);
    };
    this.recorder.record({ type: 'process:started', node, pid: proc.pid, role: 'scheduler' });
    void proc.exited.then((e) =>
      this.recorder.record({ type: 'process:exited', node, pid: proc.pid, role: 'scheduler', code: e.code, signal: e.signal, expected: this.stoppingSchedulers }),
    );
    this.log.debug('scheduler started', { node, skewMs });
    return proc;
  }
}

/** The harness's own handlers run compiled, as the worker does; a user's module is taken from the working directory. */
function handlersModule(path: string): string {
  return path === BASE_SCENARIO.handlers ? compiledEntry(path) : resolve(path);
}
