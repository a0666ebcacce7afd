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
