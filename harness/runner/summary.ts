import type { buildReportJson } from '../../reports/render/index.ts';
import { judgedText } from '../history.ts';

type ReportJson = ReturnType<typeof buildReportJson>;

/** The checks a tool this machine lacks kept from running, when the verdict left them out (a run that is not strict). */
function notCheckedHere(report: ReportJson): string[] {
  const missing = report.invariants.filter((i) => i.pass === 'unknown' && i.notHere !== undefined);
  if (missing.length === 0 || report.verdict === 'inconclusive') return [];
  const tools = [...new Set(missing.map((i) => i.notHere))];
  return [`         not checked on this machine, left out of the verdict (CI and the gate require them): ${missing.map((i) => i.name).join(', ')}; install: ${tools.join('; ')}`];
}

/** The invariants table and the verdict, for a person at a terminal or reading a CI log. */
export function printSummary(report: ReportJson, dir: string): void {
  const rows = report.invariants.map((i) => [i.pass === true ? 'PASS' : i.pass === false ? 'FAIL' : i.pass === 'not-promised' ? 'N/P ' : '????', i.name, i.figure, `judged ${judgedText(i.judged)}`, i.bound]);
  const w = [4, ...[1, 2, 3].map((c) => Math.min(60, Math.max(...rows.map((r) => String(r[c]).length), 8)))];
  const out = [
    '',
    ...rows.map((r) => `  ${r[0]}  ${String(r[1]).padEnd(w[1])}  ${String(r[2]).padEnd(w[2])}  ${String(r[3]).padEnd(w[3])}  bound: ${r[4]}`),
    '',
    `verdict: ${report.verdict.toUpperCase()}${report.interrupted ? ' (interrupted: partial report)' : ''}`,
    ...notCheckedHere(report),
    `report:  ${dir}/report.md`,
    `replay:  ${report.replayCommand}`,
    '',
  ];
  process.stdout.write(out.join('\n'));
}
