import type { Forgery } from '../history.ts';

/**
 * Requests that must not get through the dashboard's door, each one thing off the operator's own confirmed POST,
 * with the status the dashboard answers it with: an action by GET, a POST with no session (so no access token),
 * without the session's CSRF token, with another one, and from a page elsewhere (a foreign Origin, with the
 * session and its token: what a cross-site form post carries when the browser sends the cookie anyway).
 */
export const FORGERIES: Record<Forgery, number> = { get: 405, 'no-session': 401, 'no-csrf': 403, 'wrong-csrf': 403, 'foreign-origin': 403 };

/** A CSRF token of no session (a session's is 32 base64url characters from the CSPRNG). */
const ANOTHER_CSRF = 'forged-csrf-token-of-no-session';

/** A site that is not the dashboard. */
const FOREIGN_ORIGIN = 'https://intruder.example';

/**
 * The operator's browser, for a scenario run: the engine's dashboard
 * (engine/dashboard/server.ts) serves the run's database, and operator faults
 * with `via: 'dashboard'` issue their verbs as its confirmed POST actions,
 * with the session cookie, the CSRF token of a page's form and this server's
 * Origin, as a browser would. The answer is the message the next page shows
 * (green or red), the same text an operator reads.
 */
export class DashboardClient {
  constructor(
    readonly base: string,
    private readonly token: string,
  ) {}

  /**
   * A fresh session, as a browser tab logs in: the ?token= visit sets the cookie; a page with a form gives
   * the session's CSRF token. One per action: the outcome message is the session's and the next page it
   * loads consumes it, so two verbs issued at once in one session could read each other's.
   */
  private async login(): Promise<{ cookie: string; csrf: string }> {
    const res = await fetch(`${this.base}/queues?token=${encodeURIComponent(this.token)}`, { redirect: 'manual' });
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
    if (res.status !== 303 || !cookie) throw new Error(`dashboard login: expected 303 with a cookie, got ${res.status}`);
    // The dead letters' page is the cheaper one to render; the queues page always has forms once a queue exists.
    for (const page of ['/dead-letters', '/queues']) {
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await (await fetch(this.base + page, { headers: { cookie } })).text())?.[1];
      if (csrf) return { cookie, csrf };
    }
    throw new Error('dashboard login: no page offered a form (no queue or dead letter yet), so no CSRF token');
  }

  /**
   * Sends verb `verb` with its fields, confirmed, forged as `forgery` says; resolves with the status and the
   * start of the body. It never follows a redirect: a 303 is the dashboard having taken it.
   */
  async forge(forgery: Forgery, verb: string, fields: Record<string, string>, actor: { by: string; reason: string }): Promise<{ status: number; answer: string }> {
    const { cookie, csrf } = await this.login();
    const form = { back: '/audit', confirm: 'yes', by: actor.by, reason: actor.reason, ...fields };
    const post = (body: Record<string, string>, headers: Record<string, string>) =>
      fetch(`${this.base}/actions/${verb}`, { method: 'POST', body: new URLSearchParams(body), headers, redirect: 'manual' });
    const res =
      forgery === 'get'
        ? await fetch(`${this.base}/actions/${verb}?${new URLSearchParams({ _csrf: csrf, ...form })}`, { headers: { cookie, origin: this.base }, redirect: 'manual' })
        : forgery === 'no-session'
          ? await post({ _csrf: csrf, ...form }, { origin: this.base })
          : forgery === 'no-csrf'
            ? await post(form, { cookie, origin: this.base })
            : forgery === 'wrong-csrf'
              ? await post({ _csrf: ANOTHER_CSRF, ...form }, { cookie, origin: this.base })
              : await post({ _csrf: csrf, ...form }, { cookie, origin: FOREIGN_ORIGIN });
    return { status: res.status, answer: (await res.text()).slice(0, 300) };
  }

  /**
   * GETs the queues page, as a tab left open on it does, and reads which round it showed; a page that answered
   * anything but 200 (a query given up after the statement timeout answers 500) comes back as its status and the
   * error page's message, which is what the operator saw.
   */
  async readQueues(): Promise<QueuesPageRead | { status: number; message: string }> {
    const res = await fetch(`${this.base}/queues`, { headers: { authorization: `Bearer ${this.token}` } });
    const page = await res.text();
    if (res.status !== 200) return { status: res.status, message: errorMessage(page) };
    return parseQueuesPage(page);
  }

  /**
   * POSTs verb `verb` (engine/dashboard/actions.ts VERBS) confirmed, with who
   * and why; resolves with the page's message: ok (green) or refused (red).
   * Throws when the dashboard answers anything but the redirect an action ends with.
   */
  async act(verb: string, fields: Record<string, string>, actor: { by: string; reason: string }): Promise<{ ok: boolean; text: string }> {
    const { cookie, csrf } = await this.login();
    const body = new URLSearchParams({ _csrf: csrf, back: '/audit', confirm: 'yes', by: actor.by, reason: actor.reason, ...fields });
    const res = await fetch(`${this.base}/actions/${verb}`, { method: 'POST', body, headers: { cookie, origin: this.base }, redirect: 'manual' });
    if (res.status !== 303) throw new Error(`dashboard ${verb}: expected 303, got ${res.status}: ${(await res.text()).slice(0, 300)}`);
    const page = await (await fetch(this.base + (res.headers.get('location') ?? '/audit'), { headers: { cookie } })).text();
    const m = /<div class="flash (ok|error)" role="status">([^<]*)<\/div>/.exec(page);
    if (!m) throw new Error(`dashboard ${verb}: the page after the action shows no outcome`);
    return { ok: m[1] === 'ok', text: unescapeHtml(m[2]) };
  }
}

/**
 * What the queues page showed: the round (shared or its own) and per queue its due count, marked estimated or not,
 * and its oldest due, unclaimed job's age with whether the page marked it over the SLO.
 */
export interface QueuesPageRead {
  source: 'shared' | 'own';
  roundNo?: number;
  leader?: string;
  ageMs?: number;
  queues: Record<string, { due: number; estimated: boolean; oldestMs: number; overSlo: boolean }>;
}

/** Reads the round the queues page names (its data-source span) and each queue's row. */
export function parseQueuesPage(page: string): QueuesPageRead {
  const note = /<span data-field="round-source" data-source="(shared|own)"([^>]*)>/.exec(page);
  if (!note) throw new Error('dashboard /queues: the page names no round source');
  const attr = (name: string) => new RegExp(`data-${name}="([^"]*)"`).exec(note[2])?.[1];
  const queues: QueuesPageRead['queues'] = {};
  // Columns: name, pending, failed, due now (each number after an optional estimate mark).
  for (const row of page.matchAll(/<tr data-queue="([^"]+)">([\s\S]*?)<\/tr>/g)) {
    const cells = [...row[2].matchAll(/<td class="num">([\s\S]*?)<\/td>/g)].map((c) => c[1]);
    const oldest = /data-oldest-ms="(\d+)" data-over-slo="([01])"/.exec(row[2]);
    queues[unescapeHtml(row[1])] = {
      due: Number(/(\d+)$/.exec(cells[2] ?? '')?.[1] ?? NaN),
      estimated: (cells[0] ?? '').includes('data-estimate'),
      oldestMs: Number(oldest?.[1] ?? NaN),
      overSlo: oldest?.[2] === '1',
    };
  }
  if (note[1] === 'own') return { source: 'own', queues };
  return { source: 'shared', roundNo: Number(attr('round-no')), leader: unescapeHtml(attr('leader') ?? ''), ageMs: Number(attr('age-ms')), queues };
}

/** The message of the dashboard's error page (engine/dashboard/pages/confirm.ts), or the start of the body when it has none. */
function errorMessage(page: string): string {
  const m = /<p class="flash error" id="error">([^<]*)<\/p>/.exec(page);
  return unescapeHtml(m?.[1] ?? page.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim()).slice(0, 300);
}

function unescapeHtml(s: string): string {
  return s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}
