// The dashboard's own settings, each shown to change what the page does:
// sloMs decides which queues are marked over the objective, and
// statementTimeoutMs cuts off a page whose query would wait on a lock.
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock.ts';
import { DashboardServer } from '../engine/dashboard/server.ts';
import { enqueue } from '../engine/enqueue.ts';
import { createLogger } from '../engine/log.ts';
import { Db } from '../engine/db.ts';
import { freshDatabase } from './support/db.ts';
import { parseQueuesPage } from '../harness/runner/dashboard-client.ts';

const { db, url } = await freshDatabase();

async function dashboard(config: { sloMs?: number; statementTimeoutMs?: number }): Promise<(path: string) => Promise<Response>> {
  // sharedRoundMaxAgeMs 0: the queues page runs its own round, so it reads this test's rows now.
  const server = new DashboardServer(db, systemClock, { port: 0, sharedRoundMaxAgeMs: 0, ...config }, createLogger('test:dashboard', 'silent'));
  await server.start();
  afterAll(() => server.stop());
  return (path) => fetch(`http://127.0.0.1:${server.port}${path}`, { headers: { authorization: `Bearer ${server.accessToken}` } });
}

describe('dashboard settings', () => {
  it('sloMs: a queue whose oldest due job waited past it is marked over the SLO, and not under a looser one', async () => {
    await enqueue(db, 'late', {}, { runAt: new Date(Date.now() - 30_000) });
    const strict = await dashboard({ sloMs: 5_000 });
    const loose = await dashboard({ sloMs: 120_000 });
    const row = (page: string) => /<tr data-queue="late">[\s\S]*?<\/tr>/.exec(page)?.[0] ?? '';
    const strictRow = row(await (await strict('/queues')).text());
    const looseRow = row(await (await loose('/queues')).text());
    expect(strictRow).toContain('over SLO');
    expect(looseRow).not.toBe('');
    expect(looseRow).not.toContain('over SLO');
    // The same verdict as data, for a script (the harness's open tab reads it: parseQueuesPage).
    expect(parseQueuesPage(await (await strict('/queues')).text()).queues.late).toMatchObject({ overSlo: true, oldestMs: expect.any(Number) });
    const loose2 = parseQueuesPage(await (await loose('/queues')).text()).queues.late;
    expect(loose2.overSlo).toBe(false);
    expect(loose2.oldestMs).toBeGreaterThanOrEqual(30_000);
  });

  it('statementTimeoutMs: a page whose query waits on a lock answers once the timeout passes, without waiting for the lock', async () => {
    const get = await dashboard({ statementTimeoutMs: 300 });
    expect((await get('/jobs?queue=late')).status).toBe(200);
    const holder = new Db({ connectionString: url, maxConnections: 1 });
    try {
      await holder.transaction(async (tx) => {
        await tx.query('LOCK TABLE stampede.jobs IN ACCESS EXCLUSIVE MODE');
        // The lock is released only after this answer: without the timeout the page would wait on it for
        // ever (the test's own timeout); with it, the page's statement is cut off and answers an error page.
        const res = await get('/jobs?queue=late');
        expect(res.status).toBeGreaterThanOrEqual(500);
        expect(await res.text()).toMatch(/statement timeout|canceling statement|did not answer/i);
      });
    } finally {
      await holder.close();
    }
    expect((await get('/jobs?queue=late')).status).toBe(200);
  });
});
