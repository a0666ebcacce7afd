import { systemClock, type Clock } from '../clock.ts';
import { Events } from '../events.ts';
import { createLogger, type Logger } from '../log.ts';
import type { NodeProcess } from './node-process.ts';
import { restartDecision, type RestartPolicy } from './restart-policy.ts';

/** What the supervisor needs of a process it keeps alive. */
export type Supervised = Pick<NodeProcess, 'pid' | 'alive' | 'exited' | 'stop'>;

export interface SupervisorOptions<P extends Supervised = NodeProcess> {
  /** How many processes to keep running. */
  processes: number;
  /** Starts the process for a slot (0-based). Called again for every restart. */
  spawn: (slot: number) => P;
  /** Restart backoff. Defaults: 500 ms base, 30 s cap, 10 s stable. */
  restart?: Partial<RestartPolicy>;
  /**
   * Exit codes a restart cannot mend (default: none). A process that exits
   * with one is not restarted: the supervisor stops the others, emits
   * `supervisor:gave-up` and `gaveUp` resolves with that exit. `stampede
   * workers` passes 2, a worker's refusal of its flags or of the database.
   */
  fatalExitCodes?: readonly number[];
  clock?: Clock;
  events?: Events;
  log?: Logger;
}

/** The exit that made a supervisor give up: see `fatalExitCodes`. */
export interface SupervisorGaveUp {
  slot: number;
  pid: number;
  code: number;
}

const DEFAULT_RESTART: RestartPolicy = { baseMs: 500, capMs: 30_000, stableMs: 10_000 };

/**
 * Keeps N worker processes alive. A process that exits (a crash, an OOM kill,
 * a poison job's SIGKILL) is restarted after a backoff that grows with
 * consecutive crashes of that slot; stop() sends SIGTERM to all and waits.
 */
export class ProcessSupervisor<P extends Supervised = NodeProcess> {
  readonly events: Events;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly policy: RestartPolicy;
  private readonly current = new Map<number, P>();
  private running = false;
  private loops: Promise<void>[] = [];
  private stopController = new AbortController();
  private giveUp!: (exit: SupervisorGaveUp) => void;
  /** Resolves when a process exited with one of `fatalExitCodes` and the supervisor stopped; never otherwise. */
  readonly gaveUp = new Promise<SupervisorGaveUp>((resolve) => (this.giveUp = resolve));

  constructor(private readonly options: SupervisorOptions<P>) {
    this.clock = options.clock ?? systemClock;
    this.events = options.events ?? new Events();
    this.log = options.log ?? createLogger('supervisor');
    const given = Object.entries(options.restart ?? {}).filter(([, v]) => v !== undefined);
    this.policy = { ...DEFAULT_RESTART, ...Object.fromEntries(given) };
  }

  /** The live processes by slot. */
  get processes(): P[] {
    return [...this.current.values()].filter((p) => p.alive);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopController = new AbortController();
    this.loops = Array.from({ length: this.options.processes }, (_, slot) => this.keepAlive(slot));
  }

  /** SIGTERM to every process (SIGKILL after `graceMs`), and no more restarts. Safe to call twice. */
  async stop(graceMs = 15_000): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopController.abort();
    await Promise.all([...this.current.values()].map((p) => p.stop(graceMs)));
    await Promise.all(this.loops);
  }

  private async keepAlive(slot: number): Promise<void> {
    let crashes = 0;
    while (this.running) {
      const started = this.clock.now();
      const proc = this.options.spawn(slot);
      this.current.set(slot, proc);
      this.events.emit('process:started', { slot, pid: proc.pid });
      const exit = await proc.exited;
      if (!this.running) {
        this.events.emit('process:exited', { slot, pid: proc.pid, ...exit, restartInMs: null });
        return;
      }
      if (exit.code !== null && this.options.fatalExitCodes?.includes(exit.code)) {
        const gaveUp = { slot, pid: proc.pid, code: exit.code };
        this.events.emit('process:exited', { slot, pid: proc.pid, ...exit, restartInMs: null });
        this.log.error('process exited with a code a restart cannot mend; not restarting it, stopping the others', gaveUp);
        this.events.emit('supervisor:gave-up', gaveUp);
        // Not awaited: stop() waits for every slot's loop, this one included.
        void this.stop().then(() => this.giveUp(gaveUp));
        return;
      }
      const decision = restartDecision(crashes, this.clock.now() - started, this.policy);
      crashes = decision.crashes;
      this.events.emit('process:exited', { slot, pid: proc.pid, ...exit, restartInMs: decision.delayMs });
      this.log.warn('worker process exited; restarting', {
        slot,
        pid: proc.pid,
        code: exit.code,
        signal: exit.signal,
        consecutiveCrashes: crashes,
        restartInMs: decision.delayMs,
      });
      await this.clock.sleep(decision.delayMs, this.stopController.signal).catch(() => {});
    }
  }
}
