import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Clock } from '../../engine/clock.ts';
import { compiledEntry } from '../../engine/supervisor/compiled-entry.ts';
import type { GateEntry } from './plan.ts';
import { judge, type EntryResult, type RunSummary } from './verdict.ts';

export interface RunEntryOptions {
  /** Where this run's report goes. */
  dir: string;
  clock: Clock;
  /** A run that has not exited by then is interrupted (SIGINT, then SIGKILL 30 s later). */
  timeoutMs: number;
  /** Aborting interrupts the run in flight the same way. */
  signal: AbortSignal;
  /** Each stderr line of the run (its progress), for the gate's log. */
  onLine?: (line: string) => void;
}

/**
 * Runs one gate entry as its own `stampede scenario --json` process (the
 * compiled bin/scenario.js on plain node), exactly the command a developer would type, so the gate judges what the runner
 * really reports (exit code and report.json) and a run that wedges cannot
 * take the gate with it.
 */
export function runEntry(entry: GateEntry, opts: RunEntryOptions): Promise<EntryResult> {
  const args = [compiledEntry('bin/scenario.ts'), entry.scenario, '--json', '--out', opts.dir, ...(entry.mutant ? ['--mutant', entry.mutant] : [])];
  const started = opts.clock.now();
  // A gate run judges every check it names: a check this machine cannot run (no Prometheus) leaves it inconclusive.
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, STAMPEDE_STRICT: '1' } });
  let stdout = '';
  let stderrTail = '';
  let partial = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => {
    const text = partial + b.toString();
    const lines = text.split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) opts.onLine?.(l);
    stderrTail = (stderrTail + b.toString()).slice(-4_000);
  });
  const stop = new AbortController();
  const interrupt = () => {
    child.kill('SIGINT');
    opts.clock
      .sleep(30_000, stop.signal)
      .then(() => child.kill('SIGKILL'))
      .catch(() => {});
  };
  opts.clock
    .sleep(opts.timeoutMs, AbortSignal.any([stop.signal, opts.signal]))
    .then(interrupt)
    .catch(() => {});
  const onAbort = () => interrupt();
  opts.signal.addEventListener('abort', onAbort, { once: true });
  return new Promise((resolve) => {
    child.on('close', (code) => {
      stop.abort();
      opts.signal.removeEventListener('abort', onAbort);
      let summary: RunSummary | null = null;
      try {
        summary = stdout.trim() ? (JSON.parse(stdout) as RunSummary) : null;
      } catch {
        summary = null;
      }
      const error = summary ? undefined : stderrTail.trim().split('\n').slice(-6).join('\n');
      resolve({ entry, exitCode: code, durationMs: opts.clock.now() - started, summary, dir: opts.dir, ...(error ? { error } : {}), ...judge(entry, code, summary, error) });
    });
  });
}

/** The report directory of one entry under the gate's output directory. */
export function entryDir(outDir: string, entry: GateEntry): string {
  return join(outDir, 'runs', entry.mutant ? `${entry.scenario}--${entry.mutant}` : entry.scenario);
}
