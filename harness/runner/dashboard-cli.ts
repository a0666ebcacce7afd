import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { Clock } from '../../engine/clock.ts';
import { compiledEntry } from '../../engine/supervisor/compiled-entry.ts';
import { MUTANT_DASHBOARD_SCRIPT, mutantRunsIn } from '../mutants/index.ts';
import type { Scenario } from '../scenario.ts';
import type { ControlCli } from './control-cli.ts';

/**
 * The `stampede dashboard` a run starts (the dashboard-cli fault), as a script and the arguments before its flags
 * (the shape of ControlCli): the package's own entry, or, under a mutant whose broken code runs in that process or
 * in the runner (which serves its own dashboard), the harness's entry that applies it first.
 */
export function dashboardCliOf(mutant: Scenario['engine']['mutant']): ControlCli {
  const where = mutantRunsIn(mutant);
  return where === 'dashboard' || where === 'runner' ? { script: MUTANT_DASHBOARD_SCRIPT, args: ['--mutant', mutant!] } : { script: 'bin/dashboard.ts', args: [] };
}

/** The line `stampede dashboard` prints once it listens (bin/dashboard.ts): the address to open, token included. */
const STARTED = /^stampede dashboard: open (\S+)$/m;

/** How much of its stderr is kept for the history: the end, where a failure says why. */
const STDERR_KEPT = 2_000;

/**
 * `stampede dashboard <flags>` as its own process against `url`, as an operator's shell starts it: no token given
 * (STAMPEDE_DASHBOARD_TOKEN is left out of its environment, so it makes a random one).
 */
export class DashboardProcess {
  private readonly child: ChildProcessByStdio<null, Readable, Readable>;
  private stdout = '';
  private stderrText = '';
  private readonly exited: Promise<number | null>;

  constructor(cli: ControlCli, url: string, flags: readonly string[]) {
    const { STAMPEDE_DASHBOARD_TOKEN: _given, ...env } = process.env;
    this.child = spawn(process.execPath, [compiledEntry(cli.script), ...cli.args, ...flags], { env: { ...env, DATABASE_URL: url }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (b: Buffer) => (this.stdout += b.toString()));
    this.child.stderr.on('data', (b: Buffer) => (this.stderrText = (this.stderrText + b.toString()).slice(-STDERR_KEPT)));
    // A signal's death is no exit status: null, as a killed process reports it.
    this.exited = new Promise((resolve) => {
      this.child.once('error', () => resolve(null));
      this.child.once('close', (code) => resolve(code));
    });
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** The address it printed, once it did; null when it exited first or printed none within `timeoutMs`. */
  async address(clock: Clock, timeoutMs: number, signal: AbortSignal): Promise<string | null> {
    const until = clock.now() + timeoutMs;
    let running = true;
    void this.exited.then(() => (running = false));
    while (!signal.aborted && clock.now() < until) {
      const line = STARTED.exec(this.stdout);
      if (line) return line[1];
      if (!running) return null;
      await clock.sleep(20, signal).catch(() => {});
    }
    return STARTED.exec(this.stdout)?.[1] ?? null;
  }

  /** SIGTERM, then its exit status; SIGKILL after `graceMs` without an exit (null then). Harmless once it exited. */
  async stop(clock: Clock, graceMs: number): Promise<number | null> {
    this.child.kill('SIGTERM');
    const stopped = new AbortController();
    const code = await Promise.race([this.exited, clock.sleep(graceMs, stopped.signal).then(() => 'timed out' as const, () => 'timed out' as const)]);
    stopped.abort();
    if (code !== 'timed out') return code;
    this.child.kill('SIGKILL');
    await this.exited;
    return null;
  }
}
