import { fmtRateNumber } from '../../reports/render/format.ts';
import type { EntryResult } from './verdict.ts';

function pad(cells: string[][]): string {
  const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  return cells.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}

const MARK = { pass: 'ok', fail: 'FAIL', inconclusive: 'INCONCLUSIVE' } as const;

/** The summary table the gate prints: one row per run, then the replay command of every run that was not ok. */
export function summaryTable(results: readonly EntryResult[]): string {
  const rows = [['run', 'result', 'exit', 'time', 'invariants', 'rate (offered/achieved)', 'why']];
  for (const r of results) {
    const inv = r.summary?.invariants ?? [];
    const held = inv.filter((i) => i.pass === true).length;
    const rate = r.summary?.offeredRate ? `${fmtRateNumber(r.summary.offeredRate)}/${fmtRateNumber(r.summary.achievedRate ?? 0)} jobs/s` : '-';
    rows.push([
      r.entry.mutant ? `${r.entry.scenario} --mutant ${r.entry.mutant}` : r.entry.scenario,
      MARK[r.outcome],
      String(r.exitCode ?? '-'),
      `${(r.durationMs / 1000).toFixed(0)} s`,
      inv.length ? `${held}/${inv.length} held` : '-',
      rate,
      r.reason,
    ]);
  }
  const bad = results.filter((r) => r.outcome !== 'pass');
  const replays = bad.map((r) => `  ${r.summary?.replayCommand ?? `npx stampede-queue scenario ${r.entry.scenario} --seed ${r.entry.seed}${r.entry.mutant ? ` --mutant ${r.entry.mutant}` : ''}`}    # report: ${r.dir}`);
  return pad(rows) + (replays.length ? `\n\nreplay what was not ok (same seed, same workload and faults):\n${replays.join('\n')}` : '') + '\n';
}

/**
 * What broke, for the end of the gate's output (a CI log's tail is often all a reader gets): per run that was not
 * ok, each invariant that did not hold or could not judge, its figure and its first example.
 */
export function notOkDetails(results: readonly EntryResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    if (r.outcome === 'pass') continue;
    const label = r.entry.mutant ? `${r.entry.scenario} --mutant ${r.entry.mutant}` : r.entry.scenario;
    const inv = (r.summary?.invariants ?? []).filter((i) => i.pass !== true);
    if (!inv.length) lines.push(`  ${label}: ${r.reason}${r.error ? `: ${r.error.split('\n')[0]}` : ''}`);
    for (const i of inv) {
      const example = i.examples?.length ? `; first example: ${JSON.stringify(i.examples[0]).slice(0, 400)}` : '';
      lines.push(`  ${label}/${i.name}: ${i.pass === false ? 'VIOLATED' : 'inconclusive'}: ${i.figure}${example}`);
    }
  }
  return lines.length ? `\nWhat was not ok:\n${lines.join('\n')}\n` : '';
}
