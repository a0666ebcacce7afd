/**
 * Opens a rendered report.html in headless Chromium and checks that a person
 * would see it: the title is there, every chart's <svg> has a non-zero size
 * and holds data marks, and the page asked the network for nothing (the
 * report must work offline). Saves a full-page PNG next to the report.
 *
 *   npm run check:report -- reports/<scenario>/<run-id>/report.html [more.html …] [--chart-shots]
 *
 * Several files are checked in one browser (launching Chromium is most of the cost).
 * Exit codes: 0 all render, 1 a check failed, 2 cannot run (no Chromium, bad arguments).
 * Its browser is the Chromium packaged in the @sparticuz/chromium dev dependency
 * (test/support/chromium.ts; STAMPEDE_CHROMIUM picks another). A dev tool: not in the build.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { CHROMIUM_FLAGS, chromiumPath } from '../test/support/chromium.ts';

export interface ChartCheck {
  id: string;
  widthPx: number;
  heightPx: number;
  marks: number;
}

export interface HtmlCheckResult {
  file: string;
  ok: boolean;
  title: string;
  charts: ChartCheck[];
  externalRequests: string[];
  problems: string[];
  screenshot: string;
  chartShots: string[];
}

/** Checks one report in one fresh browser. */
export async function checkReportHtml(htmlPath: string, options: { chartShots?: boolean; executablePath?: string } = {}): Promise<HtmlCheckResult> {
  return (await checkReportHtmls([htmlPath], options))[0];
}

/** Checks each report in turn, in one browser with a fresh --user-data-dir, each in its own page. */
export async function checkReportHtmls(htmlPaths: string[], options: { chartShots?: boolean; executablePath?: string } = {}): Promise<HtmlCheckResult[]> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'stampede-report-check-'));
  // A persistent context is how playwright takes a fresh --user-data-dir.
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath: options.executablePath ?? chromiumPath(), headless: true, args: CHROMIUM_FLAGS });
  try {
    const results: HtmlCheckResult[] = [];
    for (const path of htmlPaths) results.push(await checkPage(context, resolve(path), options.chartShots ?? false));
    return results;
  } finally {
    await context.close();
    await rm(userDataDir, { recursive: true, force: true });
  }
}

async function checkPage(context: BrowserContext, file: string, chartShots: boolean): Promise<HtmlCheckResult> {
  const problems: string[] = [];
  const externalRequests: string[] = [];
  const page = await context.newPage();
  try {
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:') || url.startsWith('data:') || url === 'about:blank') return route.continue();
      externalRequests.push(url);
      return route.abort();
    });
    await page.setViewportSize({ width: 1100, height: 900 });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });

    const title = await page.title();
    if (!/\S/.test(title)) problems.push('the page has no <title>');
    const h1 = (await page.locator('h1').first().textContent().catch(() => null)) ?? '';
    if (!/\S/.test(h1)) problems.push('the page has no <h1> heading');

    const charts = await page.$$eval('figure.chart', (figures) =>
      figures.map((fig) => {
        const svg = fig.querySelector('svg');
        const box = svg?.getBoundingClientRect();
        // Data marks only (role-mark), not axes or legends; each must have drawn something.
        const marks = svg ? [...svg.querySelectorAll('g.role-mark > *')].filter((el) => {
          const b = (el as SVGGraphicsElement).getBBox?.();
          return b !== undefined && (b.width > 0 || b.height > 0);
        }).length : 0;
        return { id: fig.getAttribute('data-chart') ?? fig.id, widthPx: box?.width ?? 0, heightPx: box?.height ?? 0, marks };
      }),
    );
    if (charts.length === 0) problems.push('no <figure class="chart"> in the page');
    for (const c of charts) {
      if (!(c.widthPx > 0 && c.heightPx > 0)) problems.push(`chart ${c.id}: its <svg> has size ${c.widthPx}×${c.heightPx} px, expected non-zero`);
      if (c.marks === 0) problems.push(`chart ${c.id}: its <svg> holds no visible data marks`);
    }
    if (externalRequests.length) problems.push(`the page fetched from the network (must work offline): ${externalRequests.join(', ')}`);

    const stem = basename(file).replace(/\.html?$/i, '');
    const screenshot = join(dirname(file), `${stem}.png`);
    await page.screenshot({ path: screenshot, fullPage: true });
    const shots: string[] = [];
    if (chartShots) {
      for (const c of charts) {
        const shot = join(dirname(file), `${stem}-chart-${c.id}.png`);
        await page.locator(`figure.chart[data-chart="${c.id}"] svg`).screenshot({ path: shot });
        shots.push(shot);
      }
    }
    return { file, ok: problems.length === 0, title, charts, externalRequests, problems, screenshot, chartShots: shots };
  } finally {
    await page.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const paths = argv.filter((a) => !a.startsWith('--'));
  if (paths.length === 0) {
    process.stderr.write('usage: check-report-html <report.html> [more.html …] [--chart-shots]\n');
    return 2;
  }
  const missing = paths.filter((p) => !existsSync(p));
  if (missing.length) {
    process.stderr.write(`check-report-html: no such file: ${missing.join(', ')}; expected the report.html a run wrote\n`);
    return 2;
  }
  try {
    chromiumPath();
  } catch (err) {
    process.stderr.write(`check-report-html: ${(err as Error).message}\n`);
    return 2;
  }
  const results = await checkReportHtmls(paths, { chartShots: argv.includes('--chart-shots') });
  for (const r of results) {
    process.stdout.write(`${r.file}\ntitle: ${r.title}\n`);
    for (const c of r.charts) process.stdout.write(`chart ${c.id}: ${Math.round(c.widthPx)}×${Math.round(c.heightPx)} px, ${c.marks} marks\n`);
    process.stdout.write(`screenshot: ${r.screenshot}\n`);
    for (const s of r.chartShots) process.stdout.write(`chart screenshot: ${s}\n`);
    for (const p of r.problems) process.stderr.write(`FAIL ${r.file}: ${p}\n`);
    if (r.ok) process.stdout.write(`ok: ${r.charts.length} charts render\n`);
  }
  return results.every((r) => r.ok) ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`check-report-html: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(2);
    },
  );
}
