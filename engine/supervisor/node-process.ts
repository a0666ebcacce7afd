import { spawn, type ChildProcess } from 'node:child_process';
import { systemClock } from '../clock.ts';
import { ENGINE_EVENTS, Events, type EngineEvents, type NodeEvents } from '../events.ts';
import { compiledEntry } from './compiled-entry.ts';
import type { EventMessage } from './event-message.ts';
import type { EventBatch } from './event-shipper.ts';

export interface ProcessOptions {
  /** The package's script by its source path, e.g. bin/worker.ts; its compiled .js is what runs. */
  script: string;
  args: string[];
  env: Record<string, string>;
  /** Where the child's stderr goes: inherited (default), collected, or handed over line by line (`onStderrLine`). */
  stderr?: 'inherit' | 'collect' | 'lines';
  /** With `stderr: 'lines'`: called with each line the child writes. */
  onStderrLine?: (line: string) => void;
}

/** With stderr handed over line by line, this much of its end is kept for the "exited before it was ready" error. */
const STDERR_TAIL_CHARS = 4_000;

/** How a process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * A stampede node (worker or scheduler) as a real OS process, started as
 * compiled JavaScript on plain node (in the caller's working directory, so
 * relative module paths in its flags mean what the caller meant) with an IPC channel over which it forwards its engine events
 * (EventMessage). The harness and the tests share this one way of starting nodes.
 */
export class NodeProcess<M = NodeEvents> {
  readonly events = new Events();
  readonly exited: Promise<Exit>;
  /** The child's `ready` message: its id and pid, and the port of its /metrics when it serves one. */
  readonly ready: Promise<{ workerId?: string; pid: number; metricsPort?: number }>;
  private readonly child: ChildProcess;
  stderr = '';
  /** Each event the child reports, with its node time and host time (see EventMessage). */
  // A method's signature, so a process typed with more reports (the harness's workers) is still a NodeProcess.
  onEvent?(message: EventMessage<M>): void;

  constructor(options: ProcessOptions) {
    this.child = spawn(process.execPath, [compiledEntry(options.script), ...options.args], {
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'inherit', options.stderr === 'collect' || options.stderr === 'lines' ? 'pipe' : 'inherit', 'ipc'],
    });
    if (options.stderr === 'lines') {
      let partial = '';
      this.child.stderr?.on('data', (c) => {
        this.stderr = (this.stderr + c).slice(-STDERR_TAIL_CHARS);
        const lines = (partial + c).split('\n');
        partial = lines.pop()!;
        for (const line of lines) options.onStderrLine?.(line);
      });
      this.child.stderr?.on('end', () => partial && options.onStderrLine?.(partial));
    } else {
      this.child.stderr?.on('data', (c) => (this.stderr += c));
    }
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    this.ready = new Promise((resolve, reject) => {
      this.child.on('message', (m: any) => {
        if (m?.kind === 'ready') resolve(m);
      });
      void this.exited.then((e) => reject(new Error(`process exited (${e.code ?? e.signal}) before it was ready:\n${this.stderr}`)));
    });
    this.ready.catch(() => {});
    // stampede's nodes ship their events in batches (EventShipper); a lone EventMessage, from a child of the user's own, is taken too.
    this.child.on('message', (m: EventMessage<M> | EventBatch<M>) => {
      if (m?.kind === 'event') this.deliver(m);
      else if (m?.kind === 'events') for (const e of m.events) this.deliver(e);
    });
  }

  private deliver(m: EventMessage<M>): void {
    this.onEvent?.(m);
    // `events` carries the engine's own events; what else a node reports reaches onEvent only.
    if (Object.hasOwn(ENGINE_EVENTS, m.name)) {
      const { name, payload } = m as unknown as EventMessage<EngineEvents>;
      this.events.emit(name, payload);
    }
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Sends a message over the IPC channel (a clock step, an armed kill point); false if the process is gone. */
  send(message: Record<string, unknown>): boolean {
    // With a callback a failed send (EPIPE: the child just died) is reported there, not as an unhandled 'error'.
    return this.alive && this.child.connected && this.child.send(message, (err) => void err);
  }

  kill(signal: NodeJS.Signals): boolean {
    return this.alive && this.child.kill(signal);
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  async stop(graceMs = 5000): Promise<Exit> {
    if (!this.alive) return this.exited;
    this.kill('SIGTERM');
    const grace = new AbortController();
    systemClock.sleep(graceMs, grace.signal).then(
      () => this.kill('SIGKILL'),
      () => {},
    );
    const exit = await this.exited;
    grace.abort();
    return exit;
  }
}
