import { buildReportJson } from '../../reports/render/index.ts';
import { runCheckers, strictRun, verdictOf } from '../checkers/index.ts';
import { readStoredRun } from './stored-run.ts';
import { printSummary } from './summary.ts';

/**
 * `--recheck <run dir>`: runs the checkers again over a stored history and
 * final state, without running the system. Returns the exit code the run
 * would have had with today's checkers.
 */
export function recheck(dir: string, json: boolean): number {
  const run = readStoredRun(dir);
  const invariants = runCheckers(run.names, run.report.history, run.report.final, run.bounds);
  const v = verdictOf(invariants, { strict: strictRun() });
  const report = buildReportJson({ ...run.report, invariants, verdict: v.verdict });
  if (json) process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  else printSummary(report, dir);
  return v.exitCode;
}
