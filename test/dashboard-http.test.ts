import { beforeAll, describe, expect, it } from 'vitest';
import { setQueueLimits } from '../engine/control/index.ts';
import { addSchedule } from '../engine/cron/schedule.ts';
import { systemClock } from '../engine/clock.ts';
import { DashboardServer } from '../engine/dashboard/server.ts';
import { enqueue } from '../engine/enqueue.ts';
import { freshDatabase } from './support/db.ts';
import { login, makeDead, startDashboard } from './support/dashboard.ts';
import { jobRow } from './support/jobs.ts';

const { db } = await freshDatabase();
const { base, token } = await startDashboard(db);

const SCRIPT = '<script>document.title="pwned"</script>';
let deadId = 0;
let cronJobId = 0;

beforeAll(async () => {
  deadId = (await enqueue(db, 'mail', { to: SCRIPT })).id;
  await makeDead(db, deadId, SCRIPT);
  cronJobId = (await enqueue(db, 'reports', { cron: { scheduleId: 'nightly', occurrence: '2026-12-01T02:00:00.000Z' } }, { idempotencyKey: 'cron:nightly:2026-12-01T02:00:00.000Z' })).id;
  await addSchedule(db, { id: 'nightly', cron: '0 2 * * *', queue: 'reports' });
});

describe('access token', () => {
  it('refuses every path without it (401), with a wrong one, and a wrong cookie', async () => {
    for (const path of ['/', '/queues', '/jobs', `/jobs/${deadId}`, '/dead-letters', '/schedules', '/audit', '/style.css', '/nowhere']) {
      expect({ path, status: (await fetch(base + path, { redirect: 'manual' })).status }).toEqual({ path, status: 401 });
    }
    expect((await fetch(`${base}/queues?token=wrong-token-of-some-length`, { redirect: 'manual' })).status).toBe(401);
    expect((await fetch(`${base}/queues`, { headers: { cookie: 'stampede_dashboard_0=forged' } })).status).toBe(401);
    expect((await fetch(`${base}/queues`, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    const post = await fetch(`${base}/actions/redrive`, { method: 'POST', body: new URLSearchParams({ jobId: String(deadId), confirm: 'yes' }) });
    expect(post.status).toBe(401);
    expect((await jobRow(db, deadId)).state).toBe('dead');
  });

  it('a ?token= visit sets an HttpOnly SameSite=Strict cookie and redirects to the same page without the token', async () => {
    const res = await fetch(`${base}/jobs?queue=mail&token=${token}`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/jobs?queue=mail');
    expect(res.headers.get('set-cookie')).toMatch(/^stampede_dashboard_0=[\w-]+; HttpOnly; SameSite=Strict; Path=\/$/);
  });

  it('a Bearer header reads pages', async () => {
    const res = await fetch(`${base}/queues`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  it("the queues page lists a fair queue's largest keys", async () => {
    await setQueueLimits(db, 'tenants', { maxInFlight: null, maxStartsPerSecond: null, maxInFlightPerKey: 2 }, { by: 'test', reason: 'test', allowNew: true });
    await enqueue(db, 'tenants', {}, { fairnessKey: 'acct-1' });
    const page = await (await fetch(`${base}/queues`, { headers: { authorization: `Bearer ${token}` } })).text();
    expect(page).toContain('Largest keys of fair queues');
    expect(page).toMatch(/<tr data-key="tenants\/acct-1"><td>tenants<\/td><td>acct-1<\/td><td class="num">1<\/td>/);
    expect(page).toContain('per key ≤ 2');
  });
});

describe('changes only by POST, with the CSRF token and this Origin', () => {
  it('refuses a GET of an action, a POST without the CSRF token, with a wrong one, from another Origin, and with none', async () => {
    const { cookie, csrf } = await login(base, token);
    const form = (extra: Record<string, string>) => new URLSearchParams({ jobId: String(deadId), confirm: 'yes', by: 'test', reason: 'test', ...extra });
    const post = (body: URLSearchParams, headers: Record<string, string>) => fetch(`${base}/actions/redrive`, { method: 'POST', body, headers: { cookie, ...headers }, redirect: 'manual' });
    expect((await fetch(`${base}/actions/redrive?jobId=${deadId}`, { headers: { cookie } })).status).toBe(405);
    const noCsrf = await post(form({}), { origin: base });
    expect(noCsrf.status).toBe(403);
    expect(await noCsrf.text()).toContain('the form carries no valid CSRF token');
    expect((await post(form({ _csrf: 'x'.repeat(32) }), { origin: base })).status).toBe(403);
    const elsewhere = await post(form({ _csrf: csrf }), { origin: 'http://evil.example' });
    expect(elsewhere.status).toBe(403);
    expect(await elsewhere.text()).toContain('Origin http://evil.example is not this dashboard');
    // fetch always sends no Origin from node; with neither Origin nor Referer the guard refuses.
    expect((await post(form({ _csrf: csrf }), {})).status).toBe(403);
    expect((await jobRow(db, deadId)).state).toBe('dead');
  });

  it('accepts the same host over https (a TLS proxy keeping Host) and refuses a configured-looking but unlisted origin', async () => {
    const { cookie, csrf } = await login(base, token);
    const host = new URL(base).host;
    const ask = (origin: string) =>
      fetch(`${base}/actions/redrive`, { method: 'POST', body: new URLSearchParams({ _csrf: csrf, jobId: String(deadId) }), headers: { cookie, origin }, redirect: 'manual' });
    expect((await ask(`https://${host}`)).status).toBe(200);
    expect((await ask('https://queue.example.com')).status).toBe(403);
    expect(() => new DashboardServer(db, systemClock, { publicOrigins: ['https://queue.example.com/path'] })).toThrow(/publicOrigins: "https:\/\/queue.example.com\/path" is not an origin/);
  });

  it('a first POST only asks for confirmation; the confirmed one needs who and why', async () => {
    const { cookie, csrf } = await login(base, token);
    const post = (fields: Record<string, string>) =>
      fetch(`${base}/actions/redrive`, { method: 'POST', body: new URLSearchParams({ _csrf: csrf, jobId: String(deadId), back: '/dead-letters', ...fields }), headers: { cookie, origin: base }, redirect: 'manual' });
    const ask = await post({});
    expect(ask.status).toBe(200);
    expect(await ask.text()).toContain(`Move dead job ${deadId} back to pending`);
    expect((await jobRow(db, deadId)).state).toBe('dead');
    const noReason = await post({ confirm: 'yes', by: 'ana' });
    expect(noReason.status).toBe(400);
    expect(await noReason.text()).toContain('reason: is missing');
    expect((await jobRow(db, deadId)).state).toBe('dead');
  });

  it('a POST to a verb that does not exist is a 404, a name every object has included', async () => {
    const { cookie, csrf } = await login(base, token);
    for (const name of ['frobnicate', 'constructor']) {
      const res = await fetch(`${base}/actions/${name}`, { method: 'POST', body: new URLSearchParams({ _csrf: csrf }), headers: { cookie, origin: base }, redirect: 'manual' });
      expect(res.status).toBe(404);
      expect(await res.text()).toContain(`no control verb &quot;${name}&quot;`);
    }
  });
});

describe('escaping', () => {
  it('a <script> payload, error and reason are text on every page that shows them', async () => {
    const headers = { authorization: `Bearer ${token}` };
    for (const path of [`/jobs/${deadId}`, '/dead-letters', '/jobs?queue=mail&state=dead']) {
      const text = await (await fetch(base + path, { headers })).text();
      expect({ path, raw: text.includes('<script>') }).toEqual({ path, raw: false });
      expect(text).toContain('&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;');
    }
  });

  it('an error text that echoes the input is escaped too', async () => {
    const res = await fetch(`${base}/jobs?queue=${encodeURIComponent('<img src=x onerror=alert(1)>')}`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).not.toContain('<img src=x');
    expect(text).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });
});

describe('pages', () => {
  it('a job page shows its cron origin and its schedule', async () => {
    const text = await (await fetch(`${base}/jobs/${cronJobId}`, { headers: { authorization: `Bearer ${token}` } })).text();
    expect(text).toContain('schedule <a href="/schedules#nightly">nightly</a>, occurrence 2026-12-01T02:00:00.000Z (0 2 * * *, UTC, enabled)');
  });

  it('the queues page reloads itself on ?refresh=N (a meta refresh, no script), within 5-300 s', async () => {
    const headers = { authorization: `Bearer ${token}` };
    expect(await (await fetch(`${base}/queues?refresh=10`, { headers })).text()).toContain('<meta http-equiv="refresh" content="10">');
    expect(await (await fetch(`${base}/queues`, { headers })).text()).not.toContain('http-equiv="refresh"');
    const bad = await fetch(`${base}/queues?refresh=1`, { headers });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('refresh: &quot;1&quot; is not a number of seconds in [5, 300]');
  });

  it('a claimed job shows its lease holder and when the lease runs out, on the database clock', async () => {
    const id = (await enqueue(db, 'leased', {})).id;
    await db.query(`UPDATE stampede.jobs SET state = 'claimed', lease_owner = 'host-7:4242:ab', lease_token = gen_random_uuid(), lease_expires_at = now() + interval '25 s' WHERE id = $1`, [id]);
    const text = await (await fetch(`${base}/jobs/${id}`, { headers: { authorization: `Bearer ${token}` } })).text();
    expect(text).toContain('<dt>lease holder</dt><dd>host-7:4242:ab</dd>');
    expect(text).toMatch(/<dt>lease expires<\/dt><dd>\S+Z \(in 2\d\.\d s\)<\/dd>/);
    // Read with a Bearer token there is no session, so no buttons: changes need a browser session.
    expect(text).not.toContain('data-verb=');
  });

  it('an unknown job is a 404 page, a bad id a 400', async () => {
    const headers = { authorization: `Bearer ${token}` };
    expect((await fetch(`${base}/jobs/987654321`, { headers })).status).toBe(404);
    expect((await fetch(`${base}/jobs?id=12x`, { headers })).status).toBe(400);
  });
});
