import { spawn } from 'node:child_process';
import type { Actor } from '../../engine/control/index.ts';
import { compiledEntry } from '../../engine/supervisor/compiled-entry.ts';
import { MUTANT_CONTROL_SCRIPT, mutantRunsIn } from '../mutants/index.ts';
import type { Scenario } from '../scenario.ts';
import type { HistoryRecorder } from './recorder.ts';

/** Which `stampede control` a run calls: the script and the arguments before the command's own. */
export interface ControlCli {
  script: string;
  args: string[];
}

/**
 * The `stampede control` a run calls (operator faults `via: 'cli'`, the declared limits with `limitsVia: 'cli'`):
 * the package's own entry, or, under a mutant whose broken code runs in the runner (the control verbs) or in the
 * command line itself, the harness's entry that applies it first: the broken engine is in every process that runs it.
 */
export function controlCliOf(mutant: Scenario['engine']['mutant']): ControlCli {
  const where = mutantRunsIn(mutant);
  return where === 'control' || where === 'runner' ? { script: MUTANT_CONTROL_SCRIPT, args: ['--mutant', mutant!] } : { script: 'bin/control.ts', args: [] };
}

/**
 * Runs `stampede control <argv> --by .. --reason ..` as its own process against `url`, as an operator's shell
 * would, and resolves with its exit status and what it printed (a refusal's message is on stderr). With no actor,
 * neither flag is passed (a read, or an operator who forgot them).
 */
export async function runControlCli(cli: ControlCli, url: string, argv: readonly string[], actor: Actor | null, signal?: AbortSignal): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const who = actor ? ['--by', actor.by, '--reason', actor.reason] : [];
  const child = spawn(process.execPath, [compiledEntry(cli.script), ...cli.args, ...argv, ...who], {
    env: { ...process.env, DATABASE_URL: url },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(signal ? { signal } : {}),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exitCode = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, sig) => resolve(code ?? (sig ? 128 : 1)));
  });
  return { exitCode, stdout, stderr };
}

/**
 * `stampede control limit <queue>` for these limits: both global limits given (`none` for one left out, as the
 * API replaces both), the per-key ones only when set.
 */
export function limitArgv(queue: string, l: { maxInFlight?: number | null; maxStartsPerSecond?: number | null; maxInFlightPerKey?: number; sequential?: boolean }): string[] {
  return [
    'limit', queue,
    '--max-in-flight', String(l.maxInFlight ?? 'none'),
    '--max-starts-per-second', String(l.maxStartsPerSecond ?? 'none'),
    ...(l.maxInFlightPerKey !== undefined ? ['--max-in-flight-per-key', String(l.maxInFlightPerKey)] : []),
    ...(l.sequential !== undefined ? ['--sequential', l.sequential ? 'on' : 'off'] : []),
  ];
}

/** The `stampede control` refusal line of what a call printed on stderr (or all of it, trimmed). */
export const refusalLine = (stderr: string): string => stderr.split('\n').find((l) => l.startsWith('stampede control:')) ?? stderr.trim();

/**
 * The scenario's declared `queueLimits` and `keyWeights` set at the command line (`limitsVia: 'cli'`), before the
 * load starts: one `stampede control limit` per queue (limitArgv) and one `key-weight` per key, each its own process. Each call is recorded
 * (`control:setup`); one that does not exit 0 ends the run's setup with its message.
 */
export async function setLimitsAtTheCommandLine(s: Scenario, url: string, recorder: Pick<HistoryRecorder, 'record'>): Promise<void> {
  const cli = controlCliOf(s.engine.mutant);
  const actor = { by: 'scenario', reason: `scenario ${s.name}: its declared limits` };
  const calls: string[][] = [
    ...Object.entries(s.queueLimits).map(([queue, l]) => [...limitArgv(queue, l), '--new']),
    ...Object.entries(s.keyWeights).flatMap(([queue, weights]) => Object.entries(weights).map(([key, w]) => ['key-weight', queue, key, String(w), '--new'])),
  ];
  for (const command of calls) {
    const res = await runControlCli(cli, url, command, actor);
    const answer = res.exitCode === 0 ? res.stdout.trim() : refusalLine(res.stderr);
    recorder.record({ type: 'control:setup', node: 'harness', command, exitCode: res.exitCode, answer });
    if (res.exitCode !== 0) throw new Error(`limitsVia 'cli': stampede control ${command.join(' ')} exited ${res.exitCode}: ${answer}`);
  }
}
