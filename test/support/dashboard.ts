import { afterAll } from 'vitest';
import { systemClock } from '../../engine/clock.ts';
import type { Db, Queryable } from '../../engine/db.ts';
import type { DeadLetterCode } from '../../engine/dead-letters.ts';
import { DashboardServer } from '../../engine/dashboard/server.ts';
import { createLogger } from '../../engine/log.ts';

/** A dashboard on a free loopback port over the test database, stopped after the file. */
export async function startDashboard(db: Db): Promise<{ server: DashboardServer; base: string; token: string }> {
  const server = new DashboardServer(db, systemClock, { port: 0 }, createLogger('test:dashboard', 'silent'));
  await server.start();
  afterAll(() => server.stop());
  return { server, base: `http://127.0.0.1:${server.port}`, token: server.accessToken };
}

/** A session as a browser would hold it: the cookie from the ?token= visit, and the CSRF token from a page's form. */
export async function login(base: string, token: string): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${base}/queues?token=${encodeURIComponent(token)}`, { redirect: 'manual' });
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
  if (res.status !== 303 || !cookie) throw new Error(`login: expected 303 with a cookie, got ${res.status}`);
  const page = await (await fetch(`${base}/dead-letters`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
  if (!csrf) throw new Error('login: no CSRF token in the page (no dead letter to act on?)');
  return { cookie, csrf };
}

/** Makes a job dead as the engine leaves one out of attempts: a dead row with its last error, plus its dead letter ("attempts exhausted: <lastError>"). */
export async function makeDead(db: Queryable, id: number, lastError: string, code: DeadLetterCode = 'attempts_exhausted'): Promise<void> {
  await db.query(`UPDATE stampede.jobs SET state = 'claimed', lease_owner = 't', lease_token = gen_random_uuid(), lease_expires_at = now() + interval '1 min' WHERE id = $1`, [id]);
  await db.query(`UPDATE stampede.jobs SET state = 'dead', attempts = 6, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, finished_at = now(),
                         last_error = $2, errors = jsonb_build_array(jsonb_build_object('attempt', 6, 'kind', 'error', 'error', $2::text)) WHERE id = $1`, [id, lastError]);
  await db.query(`SELECT stampede.dead_letter(j, $2) FROM stampede.jobs j WHERE j.id = $1`, [id, code]);
}
