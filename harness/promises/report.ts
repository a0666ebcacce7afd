import type { MutantRow, PromiseRow, PromiseVerdict } from './judge.ts';

const MARK: Record<PromiseVerdict, string> = { vouched: 'ok', violated: 'VIOLATED', unvouched: 'UNVOUCHED', 'not run': 'not run', test: 'by test', gap: 'GAP' };
const fmt = (n: number) => n.toLocaleString('en-US');

function pad(cells: string[][]): string {
  const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  return cells.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}

/** The gate's per-promise table: verdict, judged against the minimum, and, for the ones not vouched, why. */
export function promiseTable(rows: readonly PromiseRow[]): string {
  const cells = [['promise', 'verdict', 'judged (min)', 'by']];
  for (const r of rows) {
    const judged = r.verdict === 'test' || r.verdict === 'gap' ? '-' : `${fmt(r.judged)} (${fmt(r.minJudged)})`;
    cells.push([r.id, MARK[r.verdict], judged, r.verdict === 'vouched' ? r.detail.map((d) => d.split(':')[0]).join(', ') : r.detail.join('; ')]);
  }
  return pad(cells) + '\n';
}

/** `gate --mutants`: for each promise, each of its mutants and what caught it. */
export function mutantTable(rows: readonly MutantRow[]): string {
  const cells = [['promise', 'mutant', 'outcome']];
  for (const r of rows) {
    for (const m of r.mutants) cells.push([r.id, m.mutant, m.outcome === 'caught' ? `caught by ${m.by}` : `${m.outcome.toUpperCase()}: ${m.reason}`]);
  }
  return pad(cells) + '\n';
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);

/**
 * JUnit XML with one testcase per promise: violated and unvouched are
 * failures, gaps and promises vouched by a test (not by this gate) are
 * skipped with the reason, so a CI page shows every promise and what stands behind it.
 */
export function promisesJunit(rows: readonly PromiseRow[]): string {
  const cases = rows.map((r) => {
    const open = `    <testcase classname="stampede.promises" name="${esc(r.id)}" time="0">`;
    const text = esc(`${r.promise}\n${r.detail.join('\n')}`);
    const props = `      <properties><property name="judged" value="${r.judged}"/><property name="minJudged" value="${r.minJudged}"/></properties>\n`;
    let body = '';
    if (r.verdict === 'violated') body = `      <failure message="violated">${text}</failure>\n`;
    else if (r.verdict === 'unvouched') body = `      <failure message="${esc(`judged ${r.judged} events, below its minimum of ${r.minJudged}`)}">${text}</failure>\n`;
    else if (r.verdict !== 'vouched') body = `      <skipped message="${esc(MARK[r.verdict])}">${text}</skipped>\n`;
    return `${open}\n${props}${body}    </testcase>`;
  });
  const failures = rows.filter((r) => r.verdict === 'violated' || r.verdict === 'unvouched').length;
  const skipped = rows.filter((r) => r.verdict !== 'vouched' && r.verdict !== 'violated' && r.verdict !== 'unvouched').length;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="stampede promises">\n` +
    `  <testsuite name="promises" tests="${rows.length}" failures="${failures}" errors="0" skipped="${skipped}">\n${cases.join('\n')}\n  </testsuite>\n</testsuites>\n`
  );
}
