import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
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

/** How a worker child runs, as it reports itself: the bench refuses a child that runs under a loader. */
export interface ChildRuntime {
  node: string;
  execArgv: string[];
  /** NODE_OPTIONS as the child saw it ('' when unset): a loader can hide there too. */
  nodeOptions: string;
  /** The child's own module (file: URL): compiled JavaScript, never a .ts file. */
  script: string;
}

/** Messages from a worker child (bench/worker-child.ts). */
export type ChildMessage =
  | { type: 'ready'; runtime: ChildRuntime }
  | { type: 'started' }
  | { type: 'count'; n: number }
  | { type: 'stopped'; n: number; latenciesMs: number[]; warmupLatenciesMs: number[]; dueAtMs: number[] }
  | { type: 'error'; error: string };

/**
 * The compiled child, dist/bench/worker-child.js (`npm run bench:build`),
 * whether this module runs from source (bench/proc.ts, under tsx) or compiled
 * (dist/bench/proc.js). Its stampede adapter imports the package build in
 * dist/engine/, as users run it.
 */
export const CHILD_SCRIPT = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../dist/bench/worker-child.js' : './worker-child.js', import.meta.url));

/** What `fork` is given for one worker child: the same for every system. */
export interface ChildCommand {
  script: string;
  args: string[];
  /** Always empty: plain `node`, no loader, no preload, so RSS and CPU compare like with like. */
  execArgv: string[];
  env: NodeJS.ProcessEnv;
}

/** The command of one worker child of `configId`. Pure but for reading the parent's environment. */
export function childCommand(configId: string, url: string): ChildCommand {
  // fork() would inherit the parent's execArgv (tsx's loader, when the parent runs under tsx), and
  // NODE_OPTIONS can carry a loader too: neither reaches a child.
  const { NODE_OPTIONS: _dropped, ...env } = process.env;
  return { script: CHILD_SCRIPT, args: [configId, url], execArgv: [], env: { ...env, STAMPEDE_LOG: 'warn' } };
}

/** Why a child's runtime is not plain node on compiled JavaScript, or null when it is. Pure. */
export function loaderProblem(r: ChildRuntime): string | null {
  if (r.execArgv.length > 0) return `runs with execArgv ${JSON.stringify(r.execArgv)}`;
  if (/tsx|ts-node|--import|--loader|--require/.test(r.nodeOptions)) return `runs with NODE_OPTIONS "${r.nodeOptions}"`;
  if (!r.script.endsWith('.js')) return `runs ${r.script}, not compiled JavaScript`;
  return null;
}

/** One worker OS process of one system config, driven over IPC. */
export class WorkerChild {
  private readonly proc: ChildProcess;
  count = 0;
  private waiters: { type: string; resolve: (m: ChildMessage) => void; reject: (e: Error) => void }[] = [];
  private exited = false;

  constructor(configId: string, url: string) {
    const cmd = childCommand(configId, url);
    if (!existsSync(cmd.script)) throw new Error(`${cmd.script} is missing: run \`npm run bench:build\` (npm run bench does it first)`);
    this.proc = fork(cmd.script, cmd.args, { execArgv: cmd.execArgv, env: cmd.env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
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

  /** Resolves once the child is connected, with how it runs; rejects if it runs under a loader. */
  async ready(): Promise<ChildRuntime> {
    const { runtime } = (await this.next('ready')) as Extract<ChildMessage, { type: 'ready' }>;
    const problem = loaderProblem(runtime);
    if (problem) {
      this.kill();
      throw new Error(`worker child ${this.pid} ${problem}: every system's child must be plain node on JavaScript`);
    }
    return runtime;
  }

  /**
   * Tells the worker to start claiming; resolves once it has started (listening, where it listens). From then on the
   * child reports its count every `reportEveryMs` when it changed: often where the parent waits on it (a drain's end),
   * seldom where it does not (at 500 jobs/s a 2 ms report is an IPC message per job).
   */
  async go(reportEveryMs = 10): Promise<void> {
    const started = this.next('started');
    this.proc.send({ type: 'go', reportEveryMs });
    await started;
  }

  /**
   * Stops the worker; returns what it handled and the due-to-start latencies it saw, the warm-up's apart, and
   * beside each latency the instant its job was due (`dueAtMs[i]` for `latenciesMs[i]`: a long run's per-minute figures).
   */
  async stop(): Promise<{ n: number; latenciesMs: number[]; warmupLatenciesMs: number[]; dueAtMs: number[] }> {
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
