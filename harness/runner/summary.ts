import type { buildReportJson } from '../../reports/render/index.ts';

type ReportJson = ReturnType<typeof buildReportJson>;

/** The invariants table and the verdict, for a person at a terminal or reading a CI log. */
export function printSummary(report: ReportJson, dir: string): void {
  const rows = report.invariants.map((i) => [i.pass === true ? 'PASS' : i.pass === false ? 'FAIL' : '????', i.name, i.figure, i.bound]);
  const w = [4, ...[1, 2].map((c) => Math.min(60, Math.max(...rows.map((r) => String(r[c]).length), 8)))];
  const out = [
    '',
    ...rows.map((r) => `  ${r[0]}  ${String(r[1]).padEnd(w[1])}  ${String(r[2]).padEnd(w[2])}  bound: ${r[3]}`),
    '',
    `verdict: ${report.verdict.toUpperCase()}${report.interrupted ? ' (interrupted: partial report)' : ''}`,
    `report:  ${dir}/report.md`,
    `replay:  ${report.replayCommand}`,
    '',
  ];
  process.stdout.write(out.join('\n'));
}
