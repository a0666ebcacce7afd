import { beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { addSchedule, getSchedule } from '../engine/cron/schedule.ts';
import { enqueue } from '../engine/enqueue.ts';
import { Events } from '../engine/events.ts';
import { createLogger } from '../engine/log.ts';
import { SeededRng } from '../engine/rng.ts';
import { Worker } from '../engine/worker/worker.ts';
import { launchChromium } from './support/browser.ts';
import { freshDatabase } from './support/db.ts';
import { makeDead, startDashboard } from './support/dashboard.ts';
import { jobRow } from './support/jobs.ts';

/**
 * The dashboard in a real browser (Debian's chromium through playwright-core)
 * against a real Postgres: every page renders, a control verb round-trips
 * through its confirmation to the database and to a worker, a browser
 * without the token is refused, a POST without the CSRF token is refused,
 * and a payload carrying <script> is shown as text.
 */
const { db } = await freshDatabase();
const { server, base } = await startDashboard(db);
const browser = await launchChromium();

const SCRIPT = '<script>document.title="pwned";window.pwned=1</script>';
let context: BrowserContext;
let page: Page;
let deadId = 0;
const problems: string[] = [];

/** Clicks a verb's button, fills the confirmation, confirms; returns the flash message of the page it lands on. */
async function confirmVerb(button: ReturnType<Page['locator']>, reason: string): Promise<string> {
  await button.click();
  await page.waitForURL(/\/actions\//);
  await page.fill('input[name=by]', 'ana (on call)');
  await page.fill('input[name=reason]', reason);
  await page.click('#confirm');
  await page.waitForURL((u) => !u.pathname.startsWith('/actions/'));
  return (await page.locator('.flash').textContent()) ?? '';
}

beforeAll(async () => {
  deadId = (await enqueue(db, 'mail', { to: SCRIPT })).id;
  await makeDead(db, deadId, SCRIPT);
  await enqueue(db, 'mail', { n: 1 });
  await addSchedule(db, { id: 'nightly', cron: '0 2 * * *', queue: 'reports' });
  context = await browser.newContext();
  page = await context.newPage();
  // A CSP violation, a script error or a failed subresource is a defect of the page.
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  page.on('response', (r) => r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`));
});

describe('the dashboard in Chromium', () => {
  it('the printed address logs in (the token leaves the address bar) and every page renders with its table', async () => {
    const res = await page.goto(server.loginUrl);
    expect(res?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/queues');
    expect(page.url()).not.toContain('token=');
    const pages: [string, string, string][] = [
      ['Queues', 'Queues', '#queues tr[data-queue="mail"]'],
      ['Jobs', 'Jobs', 'form[action="/jobs"]'],
      ['Dead letters', 'Dead letters', `#dead-letters tr[data-job-id="${deadId}"]`],
      ['Schedules', 'Schedules', '#schedules tr[data-schedule="nightly"]'],
      ['Audit', 'Operator actions', 'form[action="/audit"]'],
    ];
    for (const [link, h1, selector] of pages) {
      await page.click(`header a:text-is("${link}")`);
      expect(await page.locator('h1').textContent()).toBe(h1);
      expect(await page.locator(selector).count()).toBeGreaterThan(0);
      // The stylesheet loaded (the CSP allows /style.css and nothing inline).
      expect(await page.locator('header').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(29, 35, 48)');
    }
    await page.goto(`${base}/jobs?queue=mail`);
    expect(await page.locator('#results tr[data-job-id]').count()).toBe(2);
    await page.click(`#results a:text-is("${deadId}")`);
    expect(await page.locator('h1').textContent()).toBe(`Job ${deadId}`);
    expect(await page.locator('[data-field=state]').textContent()).toBe('dead');
    expect(await page.locator('#errors tr').count()).toBe(2);
    expect(problems).toEqual([]);
  });

  it('a payload, error and reason carrying <script> are shown as text, never run', async () => {
    for (const path of [`/jobs/${deadId}`, '/dead-letters']) {
      await page.goto(base + path);
      expect(await page.title()).not.toContain('pwned');
      expect(await page.evaluate(() => (window as { pwned?: number }).pwned)).toBeUndefined();
      expect(await page.locator('script').count()).toBe(0);
      expect(await page.locator('main').textContent()).toContain(SCRIPT);
    }
    await page.goto(`${base}/jobs/${deadId}`);
    expect(await page.locator('#payload').textContent()).toContain(SCRIPT.replace(/"/g, '\\"'));
  });

  it('redrive round-trips: button, confirmation, the job is pending, a worker runs it', async () => {
    await page.goto(`${base}/dead-letters`);
    const flash = await confirmVerb(page.locator(`#dead-letters tr[data-job-id="${deadId}"] button[data-verb=redrive]`), 'downstream fixed');
    expect(flash).toBe(`Job ${deadId} redriven: pending, due now (it was dead).`);
    expect(new URL(page.url()).pathname).toBe('/dead-letters');
    expect(await page.locator(`#dead-letters tr[data-job-id="${deadId}"]`).count()).toBe(0);
    expect((await jobRow(db, deadId)).state).toBe('pending');

    const events = new Events();
    const worker = new Worker({ db, events, rng: new SeededRng(1), listen: false, rescue: false, handlers: { mail: () => {} }, log: createLogger('test:worker', 'silent') });
    const done = events.waitFor('job:completed', (e) => e.jobId === deadId);
    expect(await worker.runOnce()).toBe(2);
    await done;
    await worker.stop();
    expect((await jobRow(db, deadId)).state).toBe('done');
  });

  it('pause round-trips: paused in the page, a worker claims nothing of the queue while a job is due; resumed, it claims it', async () => {
    const due = (await enqueue(db, 'sms', { n: 'while paused' })).id;
    const events = new Events();
    const worker = new Worker({ db, events, rng: new SeededRng(2), listen: false, rescue: false, handlers: { sms: () => {} }, log: createLogger('test:worker', 'silent') });
    try {
      await page.goto(`${base}/queues`);
      const flash = await confirmVerb(page.locator('tr[data-queue=sms] button[data-verb=pause-queue]'), 'downstream SMTP is down');
      expect(flash).toMatch(/^Queue sms paused at \d{4}-/);
      expect(await page.locator('tr[data-queue=sms] [data-field=paused]').textContent()).toMatch(/^paused since .* by ana \(on call\): downstream SMTP is down$/);
      // The job is due and the worker has free slots: a running queue would be claimed by this very call.
      expect((await jobRow(db, due)).state).toBe('pending');
      expect(await worker.runOnce()).toBe(0);
      expect((await jobRow(db, due)).state).toBe('pending');

      expect(await confirmVerb(page.locator('tr[data-queue=sms] button[data-verb=resume-queue]'), 'SMTP back')).toMatch(/^Queue sms resumed at /);
      expect(await page.locator('tr[data-queue=sms] [data-field=paused]').textContent()).toBe('running');
      const done = events.waitFor('job:completed', (e) => e.jobId === due);
      expect(await worker.runOnce()).toBe(1);
      await done;
    } finally {
      await worker.stop();
    }
    expect((await jobRow(db, due)).state).toBe('done');
    const audit = (await db.query(`SELECT verb, actor, reason FROM stampede.control_audit WHERE queue = 'sms' AND job_id IS NULL ORDER BY id`)).rows;
    expect(audit).toEqual([
      { verb: 'pause', actor: 'ana (on call)', reason: 'downstream SMTP is down' },
      { verb: 'resume', actor: 'ana (on call)', reason: 'SMTP back' },
    ]);
    await page.click('tr[data-queue=sms] a:text-is("actions")');
    expect(await page.locator('#audit tbody tr td:nth-child(2)').allTextContents()).toEqual(['resume', 'pause']);
    expect(problems).toEqual([]);
  });

  it('a job\'s buttons: dead-letter by hand, retry now, cancel; each recorded on its page; a refused verb says why', async () => {
    const id = (await enqueue(db, 'mail', { n: 'poison?' }, { delayMs: 3_600_000 })).id;
    await page.goto(`${base}/jobs/${id}`);
    expect(await page.locator('button[data-verb]').evaluateAll((bs) => bs.map((b) => b.getAttribute('data-verb')))).toEqual(['cancel', 'dead-letter']);
    expect(await confirmVerb(page.locator('button[data-verb=dead-letter]'), 'crashes the parser')).toBe(`Job ${id} dead-lettered (it was pending).`);
    expect((await jobRow(db, id)).state).toBe('dead');

    await page.goto(`${base}/jobs/${id}`);
    expect(await page.locator('[data-field=state]').textContent()).toBe('dead');
    expect(await confirmVerb(page.locator('button[data-verb=retry]'), 'parser fixed')).toBe(`Job ${id} is due now (it was dead).`);
    expect((await jobRow(db, id)).state).toBe('pending');

    await page.goto(`${base}/jobs/${id}`);
    await page.locator('button[data-verb=cancel]').click();
    await page.waitForURL(/\/actions\/cancel/);
    // Someone else cancels it while this operator reads the confirmation: the engine refuses the second cancel.
    await db.query(`UPDATE stampede.jobs SET state = 'cancelled', finished_at = now() WHERE id = $1`, [id]);
    // "who" is prefilled with the name given on the last confirmation (the field is required).
    await page.fill('input[name=reason]', 'not needed');
    await page.click('#confirm');
    await page.waitForURL((u) => u.pathname === `/jobs/${id}`);
    expect(await page.locator('.flash.error').textContent()).toBe(`cancel job ${id}: it is cancelled; expected pending or failed or claimed (a finished job stays as it ended; a dead one can be retried or left)`);
    expect(await page.locator('button[data-verb]').count()).toBe(0);
    const audit = await page.locator('#audit tbody tr td:nth-child(2)').allTextContents();
    expect(audit).toEqual(['retry', 'dead-letter']);
    expect(problems).toEqual([]);
  });

  it('limits set in the page bind the claim: at most 1 in flight of 3 due; cleared in the page, the rest is claimed', async () => {
    for (let i = 0; i < 3; i++) await enqueue(db, 'limited', { i });
    const worker = new Worker({ db, rng: new SeededRng(4), listen: false, rescue: false, concurrency: 10, handlers: { limited: () => new Promise(() => {}) }, log: createLogger('test:worker', 'silent'), shutdownGraceMs: 0 });
    /** Opens the queue's limits form from the queues page, checks its prefilled value, submits `maxInFlight`. */
    const setLimit = async (prefilled: string, maxInFlight: string, reason: string) => {
      await page.goto(`${base}/queues`);
      await page.click('tr[data-queue=limited] button[data-verb=set-limits]');
      await page.waitForURL(/\/actions\/set-limits/);
      expect(await page.inputValue('input[name=maxInFlight]')).toBe(prefilled);
      await page.fill('input[name=maxInFlight]', maxInFlight);
      await page.fill('input[name=reason]', reason);
      await page.click('#confirm');
    };
    const landedOnQueues = async () => {
      await page.waitForURL((u) => u.pathname === '/queues');
      return page.locator('.flash').textContent();
    };
    try {
      await setLimit('', '1', 'the downstream takes one at a time');
      expect(await landedOnQueues()).toBe('Queue limited: at most 1 in flight.');
      expect(await worker.runOnce()).toBe(1);
      expect(await worker.runOnce()).toBe(0); // the one in flight holds the only slot
      await page.goto(`${base}/queues`);
      expect(await page.locator('tr[data-queue=limited] td:nth-child(9)').textContent()).toBe('in flight 1 of 1; 2 due held back by the limit');

      await setLimit('1', 'lots', 'typo');
      expect(await page.locator('#error').textContent()).toBe('maxInFlight: "lots" is not a whole number of jobs >= 1; leave it empty for no limit');
      await setLimit('1', '', 'downstream scaled up');
      expect(await landedOnQueues()).toBe('Queue limited: no limit.');
      expect(await worker.runOnce()).toBe(2);
    } finally {
      await worker.stop(0);
    }
    // The refused typo was a 400, as it should be; nothing else went wrong.
    expect(problems.filter((p) => !/400|request failed: .*\/actions\/set-limits/.test(p))).toEqual([]);
    problems.length = 0;
  });

  it('bulk redrive by queue, code and reason from the dead letters page moves that group only', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await enqueue(db, 'bulk', { i })).id);
    for (const id of ids.slice(0, 3)) await makeDead(db, id, '503 from billing');
    await makeDead(db, ids[3], 'invalid payload');
    // The same reason under another code: a group of its own, which the first group's button must leave dead.
    await makeDead(db, ids[4], '503 from billing', 'timeout');
    await page.goto(`${base}/dead-letters?queue=bulk`);
    const row = page.locator('#reasons tr', { hasText: '503 from billing' }).filter({ hasText: 'attempts_exhausted' });
    expect(await confirmVerb(row.locator('button[data-verb=redrive-bulk]'), 'billing is back')).toBe('3 dead letters of bulk redriven.');
    const states = (await db.query(`SELECT id, state::text FROM stampede.jobs WHERE queue = 'bulk' ORDER BY id`)).rows.map((r) => r.state);
    expect(states).toEqual(['pending', 'pending', 'pending', 'dead', 'dead']);
    expect(await page.locator('#dead-letters tr[data-job-id]').count()).toBe(2);
  });

  it('schedule pause and resume round-trip through the page to the row', async () => {
    await page.goto(`${base}/schedules`);
    expect(await confirmVerb(page.locator('tr[data-schedule=nightly] button[data-verb=pause-schedule]'), 'maintenance window')).toBe('Schedule nightly paused.');
    expect(await page.locator('tr[data-schedule=nightly] [data-field=state]').textContent()).toBe('paused');
    expect((await getSchedule(db, 'nightly'))?.enabled).toBe(false);
    expect(await confirmVerb(page.locator('tr[data-schedule=nightly] button[data-verb=resume-schedule]'), 'window over')).toBe('Schedule nightly resumed.');
    expect((await getSchedule(db, 'nightly'))?.enabled).toBe(true);
    expect(problems).toEqual([]);
  });

  it('a POST without the CSRF token is refused (403) and changes nothing', async () => {
    await page.goto(`${base}/schedules`);
    await page.locator('tr[data-schedule=nightly] form input[name=_csrf]').evaluate((el) => el.remove());
    const [res] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/actions/pause-schedule')), page.click('tr[data-schedule=nightly] button')]);
    expect(res.status()).toBe(403);
    expect(await page.locator('#error').textContent()).toContain('no valid CSRF token');
    expect((await getSchedule(db, 'nightly'))?.enabled).toBe(true);
  });

  it('a browser without the token is refused (401) on every page', async () => {
    const stranger = await (await browser.newContext()).newPage();
    for (const path of ['/queues', '/jobs', `/jobs/${deadId}`, '/dead-letters', '/schedules']) {
      const res = await stranger.goto(base + path);
      expect({ path, status: res?.status() }).toEqual({ path, status: 401 });
      expect(await stranger.locator('body').textContent()).toContain('needs its access token');
    }
  });
});
