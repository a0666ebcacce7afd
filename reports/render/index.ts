import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { redactSecrets } from '../../engine/redact.ts';
import type { ReportFiles, ReportInput } from './input.ts';
import { analyze } from './analysis.ts';
import { chartSpecs, renderSvg, type RenderedChart } from './charts.ts';
import { buildDocument } from './document.ts';
import { toMarkdown } from './markdown.ts';
import { toHtml } from './html.ts';
import { buildReportJson } from './json.ts';
import { ratesCsv, timeseriesCsv } from './series.ts';

export type { ReportInput, ReportFiles } from './input.ts';
export { ReportInputError, validateReportInput } from './input.ts';
export { buildReportJson, REPORT_JSON_SCHEMA, type ReportJson } from './json.ts';
export { analyze, type Analysis } from './analysis.ts';

/**
 * Renders the postmortem for one run into `outDir` (created if missing):
 * report.md, report.json, report.html, one SVG per chart, timeseries.csv
 * (one row per sample) and rates.csv (one row per second). Pure over its
 * input: nothing is read from the database or the clock, so a stored run
 * renders the same report again. Every byte written passes through
 * redactSecrets as a last guard, after the input itself was redacted.
 */
export async function renderReport(input: ReportInput, outDir: string): Promise<ReportFiles> {
  const analysis = analyze(input);
  const dir = resolve(outDir);
  await mkdir(dir, { recursive: true });
  const write = async (name: string, content: string) => {
    const path = join(dir, name);
    await writeFile(path, redactSecrets(content), 'utf8');
    return path;
  };

  const charts: RenderedChart[] = [];
  const chartFiles: Record<string, string> = {};
  // One at a time: each render holds a vega View and its scenegraph; the machine is small.
  for (const c of chartSpecs(analysis.input, analysis.idx, analysis.rates, analysis.window)) {
    const file = `chart-${c.id}.svg`;
    const svg = await renderSvg(c.spec);
    chartFiles[c.id] = await write(file, svg);
    charts.push({ ...c, file, svg });
  }

  const blocks = buildDocument(analysis, charts);
  const title = `Incident report: ${analysis.input.scenario.name} (seed ${analysis.input.seed})`;
  return {
    dir,
    markdown: await write('report.md', toMarkdown(blocks)),
    json: await write('report.json', JSON.stringify(buildReportJson(input, analysis), null, 2) + '\n'),
    html: await write('report.html', toHtml(blocks, title)),
    charts: chartFiles,
    timeseriesCsv: await write('timeseries.csv', timeseriesCsv(analysis.idx)),
    ratesCsv: await write('rates.csv', ratesCsv(analysis.rates)),
  };
}
