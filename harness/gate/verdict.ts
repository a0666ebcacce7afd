import type { Judged } from '../history.ts';
import type { GateEntry } from './plan.ts';

/** One invariant as a run's report.json lists it. */
export interface ReportedInvariant {
  name: string;
  pass: boolean | 'unknown';
  figure: string;
  bound: string;
  /** How many telling events it judged (absent from runs recorded before checkers counted them). */
  judged?: Judged;
  examples?: unknown[];
}

/** The part of report.json (the `--json` summary) the gate reads. */
export interface RunSummary {
  scenario: { name: string };
  seed: number;
  verdict: string;
  replayCommand: string;
  interrupted: boolean;
  offeredRate?: number;
  achievedRate?: number;
  invariants: ReportedInvariant[];
}

/** What became of one gate entry. */
export interface EntryResult {
  entry: GateEntry;
  /** The run's exit code (0 pass, 1 violated, 2 setup error, 3 inconclusive, 130 interrupted); null if it never exited. */
  exitCode: number | null;
  durationMs: number;
  summary: RunSummary | null;
  /** Where the run's report went. */
  dir: string;
  /** Why the run gave no summary (setup error, timeout), from its stderr. */
  error?: string;
  /** pass: the scenario passed or the mutant was caught; fail: an invariant broke or the mutant survived; inconclusive: neither could be shown. */
  outcome: 'pass' | 'fail' | 'inconclusive';
  /** One line saying why. */
  reason: string;
}

/**
 * Judges one finished run. A scenario entry passes when every invariant
 * holds (exit 0); one false invariant fails it; an inconclusive run (a fault
 * that never bit, a queue that never drained) is not green either. A mutant
 * entry passes (the mutant is caught) only when the invariant it must trip
 * came out false; if that invariant held, the mutant survived.
 */
export function judge(entry: GateEntry, exitCode: number | null, summary: RunSummary | null, error?: string): Pick<EntryResult, 'outcome' | 'reason'> {
  if (!summary) return { outcome: 'fail', reason: `no result (exit ${exitCode ?? 'none'}): ${error ?? 'the run printed no summary'}` };
  const failed = summary.invariants.filter((i) => i.pass === false).map((i) => i.name);
  const unknown = summary.invariants.filter((i) => i.pass === 'unknown').map((i) => i.name);
  if (summary.interrupted) return { outcome: 'inconclusive', reason: 'interrupted' };
  if (entry.mutant === null) {
    if (failed.length) return { outcome: 'fail', reason: `violated: ${failed.join(', ')}` };
    if (unknown.length) return { outcome: 'inconclusive', reason: `inconclusive: ${unknown.join(', ')}` };
    return { outcome: 'pass', reason: `${summary.invariants.length} invariants hold` };
  }
  const target = summary.invariants.find((i) => i.name === entry.mustFail);
  if (!target) return { outcome: 'fail', reason: `survived: the scenario does not check ${entry.mustFail}` };
  if (target.pass === false) {
    const others = failed.filter((n) => n !== entry.mustFail);
    return { outcome: 'pass', reason: `caught by ${entry.mustFail}${others.length ? ` (also tripped: ${others.join(', ')})` : ''}` };
  }
  if (target.pass === 'unknown') return { outcome: 'inconclusive', reason: `not shown: ${entry.mustFail} was inconclusive (${target.figure})` };
  return { outcome: 'fail', reason: `SURVIVED: ${entry.mustFail} stayed green (${target.figure})` };
}
