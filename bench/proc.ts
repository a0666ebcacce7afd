import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../engine/clock.ts';
import type { BenchJob } from './systems/types.ts';

/**
 * Milliseconds on the machine's monotonic clock (CLOCK_MONOTONIC via
 * process.hrtime), with sub-millisecond resolution. It is one clock for every
 * process on this machine, so the producer's "due" instant and a worker
 * child's "started" instant can be subtracted; Date.now() has 1 ms steps (too
 * coarse for a p50 of a few ms) and a wall clock can be stepped mid-run.
 */
export function wallMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Peak resident set of a live process, in bytes, from /proc/<pid>/status VmHWM (Linux). */
export function peakRssBytes(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Messages from a worker child (bench/worker-child.ts). */
export type ChildMessage =
  | { type: 'ready' }
  | { type: 'started' }
  | { type: 'count'; n: number }
  | { type: 'stopped'; n: number; latenciesMs: number[] }
  | { type: 'error'; error: string };

const CHILD = fileURLToPath(new URL('./worker-child.ts', import.meta.url));

/** One worker OS process of one system config, driven over IPC. */
export class WorkerChild {
  private readonly proc: ChildProcess;
  count = 0;
  private waiters: { type: string; resolve: (m: ChildMessage) => void; reject: (e: Error) => void }[] = [];
  private exited = false;

  constructor(configId: string, url: string) {
    // The same loader (tsx) for every system, so its share of the RSS is the same for all.
    this.proc = fork(CHILD, [configId, url], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: { ...process.env, STAMPEDE_LOG: 'warn' },
    });
    this.proc.on('message', (m: ChildMessage) => {
      if (m.type === 'count') this.count = m.n;
      if (m.type === 'error') for (const w of this.waiters.splice(0)) w.reject(new Error(`worker child ${configId}: ${m.error}`));
      for (const w of this.waiters.filter((x) => x.type === m.type)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(m);
      }
    });
    this.proc.on('exit', (code) => {
      this.exited = true;
      for (const w of this.waiters.splice(0)) w.reject(new Error(`worker child ${configId} exited with ${code}`));
    });
  }

  get pid(): number {
    return this.proc.pid!;
  }

  private next(type: ChildMessage['type']): Promise<ChildMessage> {
    if (this.exited) return Promise.reject(new Error('worker child has exited'));
    return new Promise((resolve, reject) => this.waiters.push({ type, resolve, reject }));
  }

  ready(): Promise<ChildMessage> {
    return this.next('ready');
  }

  /** Tells the worker to start claiming; resolves once it has started (listening, where it listens). */
  async go(): Promise<void> {
    const started = this.next('started');
    this.proc.send({ type: 'go' });
    await started;
  }

  /** Stops the worker; returns what it handled and the due-to-start latencies it saw. */
  async stop(): Promise<{ n: number; latenciesMs: number[] }> {
    const stopped = this.next('stopped');
    this.proc.send({ type: 'stop' });
    const m = (await stopped) as Extract<ChildMessage, { type: 'stopped' }>;
    await this.exit();
    return m;
  }

  async exit(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.proc.once('exit', () => resolve()));
    const timer = systemClock.sleep(15_000).then(() => this.proc.kill('SIGKILL'));
    await Promise.race([gone, timer]);
    await gone;
  }

  kill(): void {
    if (!this.exited) this.proc.kill('SIGKILL');
  }
}

/** Used by the child: due-to-start of one job, in ms. */
export function dueToStartMs(job: BenchJob): number {
  return wallMs() - job.t;
}
