import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReport } from '../reports/render/index.ts';
import { buildIncidentFixture } from './fixtures/incident-history.ts';

/**
 * Runs bin/check-report-html.ts (headless Chromium, the one packaged in a dev
 * dependency: test/support/chromium.ts) on a rendered report, and on a broken
 * copy as its negative control. Never skipped: every machine that ran `npm ci` has the browser.
 */

const run = promisify(execFile);
async function check(htmls: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'bin/check-report-html.ts', ...htmls], { cwd: process.cwd(), timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('report.html in headless Chromium', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'stampede-report-browser-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  // One browser launch for both pages: the rendered report, and a broken copy as the negative control.
  it('passes the rendered report (title, five charts with size and marks, no network, a screenshot) and fails a broken copy', async () => {
    const html = (await renderReport(buildIncidentFixture(42), dir)).html;
    const broken = join(dir, 'broken.html');
    const text = await readFile(html, 'utf8');
    const emptied = text.replace(/(<figure class="chart"[^>]*data-chart="rates"[^>]*>\n)<svg[\s\S]*?<\/svg>/, '$1<svg xmlns="http://www.w3.org/2000/svg" width="0" height="0"></svg>');
    expect(emptied).not.toBe(text);
    await writeFile(broken, emptied.replace('</body>', '<img src="http://example.invalid/pixel.png"></body>'));

    const r = await check([html, broken]);
    // Exit 2 is the checker's own failure (no browser, a launch that threw): say what it printed.
    expect(r.code, `check-report-html exited ${r.code}; stderr: ${r.stderr}`).toBe(1);
    const [good, bad] = r.stdout.split(`${broken}\n`);
    expect(good).toContain('title: Incident report: poison-herd (seed 42)');
    for (const id of ['queue-depth', 'oldest-age', 'dead-letter-depth', 'rates', 'load']) expect(good).toMatch(new RegExp(`chart ${id}: [1-9]\\d*×[1-9]\\d* px, [1-9]\\d* marks`));
    expect(good).toContain('ok: 5 charts render');
    expect(bad).not.toContain('ok:');
    expect(r.stderr).not.toContain(`FAIL ${html}`);
    expect(r.stderr).toContain(`FAIL ${broken}: chart rates: its <svg> has size 0×0 px, expected non-zero`);
    expect(r.stderr).toContain(`FAIL ${broken}: chart rates: its <svg> holds no visible data marks`);
    expect(r.stderr).toContain(`FAIL ${broken}: the page fetched from the network (must work offline): http://example.invalid/pixel.png`);
    const png = await readFile(join(dir, 'report.png'));
    expect(png.subarray(1, 4).toString()).toBe('PNG');
  });
});
