import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../clock.ts';
import type { Db, Queryable } from '../db.ts';
import { getQueueControl, listAudit, listQueueControls } from '../control/index.ts';
import { getSchedule, listSchedules } from '../cron/schedule.ts';
import { listDeadLetters } from '../dead-letters.ts';
import { ValidationError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { queueStateQueries, type QueueStateSampler, type QueueStateSnapshot } from '../metrics/queue-state-sampler.ts';
import { readSharedRound } from '../metrics/sampler-election.ts';
import { redactSecrets } from '../redact.ts';
import { validateQueueName } from '../validate.ts';
import { VERBS } from './actions.ts';
import type { Access, DashboardAuth, Session } from './auth.ts';
import type { Html } from './html.ts';
import { auditPage } from './pages/audit.ts';
import { confirmPage, errorPage } from './pages/confirm.ts';
import { deadLettersPage } from './pages/dead-letters.ts';
import { jobPage, searchPage, type SearchForm } from './pages/jobs.ts';
import { STYLESHEET, type PageContext } from './pages/layout.ts';
import { queuesPage } from './pages/queues.ts';
import { schedulesPage } from './pages/schedules.ts';
import { cronOrigin, deadLetterOfJob, deadLetterReasons, getJob, largestKeys, recentAudit, SEARCH_DEFAULTS, searchJobs, type JobSearch, type SearchState } from './queries.ts';

export interface RouteDeps {
  db: Db;
  clock: Clock;
  auth: DashboardAuth;
  sampler: QueueStateSampler;
  /** A shared round younger than this (ms) is shown instead of running one. */
  sharedRoundMaxAgeMs: number;
  sloMs: number;
  statementTimeoutMs: number;
  log: Logger;
}

/** No script at all, styles only from /style.css, forms only to this server, never framed. */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on a POST, which the CSRF guard refuses.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

const MAX_FORM_BYTES = 64 * 1024;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: Html | string, type = 'text/html; charset=utf-8', extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, ...extra }).end(String(body));
}

function redirect(res: ServerResponse, location: string, extra: Record<string, string> = {}): void {
  res.writeHead(303, { ...SECURITY_HEADERS, location, ...extra }).end();
}

/** Each page's reads in one read-only transaction under a statement_timeout: a dashboard must never become the load. */
function readOnly<T>(deps: RouteDeps, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return deps.db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION READ ONLY');
    await tx.query(queueStateQueries.LocalStatementTimeout, [deps.statementTimeoutMs]);
    return fn(tx);
  });
}

async function dbNow(tx: Queryable): Promise<Date> {
  return (await tx.query('SELECT now() AS now')).rows[0].now;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('application/x-www-form-urlencoded')) throw new HttpError(415, `expected a form (application/x-www-form-urlencoded), got "${type}"`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw new HttpError(413, `the form is over ${MAX_FORM_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** Where to go after an action: a path of this server only (never "//host", a full URL, or a control character in a header). */
export function safeBack(value: string | null): string {
  return value && value.startsWith('/') && !value.startsWith('//') && !/[\\\x00-\x1f\x7f]/.test(value) ? value : '/queues';
}

function searchFromForm(url: URL): { form: SearchForm; search: JobSearch | null } {
  const form: SearchForm = {
    id: url.searchParams.get('id')?.trim() ?? '',
    key: url.searchParams.get('key') ?? '',
    queue: url.searchParams.get('queue')?.trim() ?? '',
    state: url.searchParams.get('state') ?? '',
  };
  if (form.id) {
    if (!/^\d+$/.test(form.id)) throw new ValidationError('id', `"${form.id}" is not a job id; expected a positive integer`);
    return { form, search: { id: Number(form.id) } };
  }
  if (form.key) return { form, search: { idempotencyKey: form.key } };
  if (!form.queue && !form.state) return { form, search: null };
  return { form, search: { queue: form.queue || undefined, state: (form.state || undefined) as SearchState | undefined } };
}

/**
 * The elected sampler's latest round when it is fresh (free: one row), else a
 * round of the page's own (bounded by its roundRowBudget). `ageMs`: how old
 * the shown round is, database clock (0 for the page's own).
 */
async function latestRound(deps: RouteDeps): Promise<{ snapshot: QueueStateSnapshot; ageMs: number; roundNo: number | null }> {
  const shared = await readOnly(deps, (tx) => readSharedRound(tx, deps.sharedRoundMaxAgeMs));
  if (shared) return { snapshot: shared.snapshot, ageMs: shared.ageMs, roundNo: shared.roundNo };
  return { snapshot: await deps.sampler.runOnce(), ageMs: 0, roundNo: null };
}

/** ?refresh=N: 5-300 s (each reload reads the shared round, or runs one sampler round). */
function refreshFrom(url: URL): number | null {
  const raw = url.searchParams.get('refresh');
  if (raw === null || raw === '') return null;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 5 || n > 300) throw new ValidationError('refresh', `"${raw}" is not a number of seconds in [5, 300]`);
  return n;
}

type Page = (deps: RouteDeps, ctx: Omit<PageContext, 'dbNow'>, url: URL) => Promise<{ status?: number; body: Html }>;

const PAGES: { pattern: RegExp; page: Page }[] = [
  {
    pattern: /^\/queues$/,
    async page(deps, ctx, url) {
      const refreshSeconds = refreshFrom(url);
      const { snapshot, ageMs, roundNo } = await latestRound(deps);
      return readOnly(deps, async (tx) => {
        const [controls, schedules, keys, now] = [await listQueueControls(tx), await listSchedules(tx), await largestKeys(tx), await dbNow(tx)];
        return { body: queuesPage({ ...ctx, dbNow: now }, { snapshot, roundAgeMs: ageMs, roundNo, controls, schedules, keys, sloMs: deps.sloMs, refreshSeconds }) };
      });
    },
  },
  {
    pattern: /^\/jobs$/,
    async page(deps, ctx, url) {
      const { form, search } = searchFromForm(url);
      return readOnly(deps, async (tx) => {
        const jobs = search ? await searchJobs(tx, search) : [];
        return { body: searchPage({ ...ctx, dbNow: await dbNow(tx) }, form, search, jobs, SEARCH_DEFAULTS.recentDoneScanRows) };
      });
    },
  },
  {
    pattern: /^\/jobs\/(\d+)$/,
    async page(deps, ctx, url) {
      const id = Number(/^\/jobs\/(\d+)$/.exec(url.pathname)![1]);
      return readOnly(deps, async (tx) => {
        const job = await getJob(tx, id);
        if (!job) throw new HttpError(404, `no job ${id} in stampede.jobs or stampede.job_history (archived jobs past retention are gone)`);
        const origin = cronOrigin(job);
        const schedule = origin ? await getSchedule(tx, origin.scheduleId).catch(() => null) : null;
        const deadLetter = job.state === 'dead' ? await deadLetterOfJob(tx, id) : null;
        const audit = await listAudit(tx, { jobId: id, limit: 50 });
        const queueControl = await getQueueControl(tx, job.queue);
        return { body: jobPage({ ...ctx, dbNow: await dbNow(tx) }, { job, deadLetter, schedule, audit, queueControl }) };
      });
    },
  },
  {
    pattern: /^\/dead-letters$/,
    async page(deps, ctx, url) {
      const raw = url.searchParams.get('queue')?.trim() || null;
      const queue = raw === null ? null : validateQueueName(raw);
      const limit = 100;
      return readOnly(deps, async (tx) => {
        const groups = await deadLetterReasons(tx);
        const letters = await listDeadLetters(tx, { queue: queue ?? undefined, limit });
        return { body: deadLettersPage({ ...ctx, dbNow: await dbNow(tx) }, { queue, groups, letters, limit }) };
      });
    },
  },
  {
    pattern: /^\/audit$/,
    async page(deps, ctx, url) {
      const raw = url.searchParams.get('queue')?.trim() || null;
      const queue = raw === null ? null : validateQueueName(raw);
      const limit = 100;
      return readOnly(deps, async (tx) => {
        const entries = queue === null ? await recentAudit(tx, limit) : await listAudit(tx, { queue, limit });
        return { body: auditPage({ ...ctx, dbNow: await dbNow(tx) }, queue, entries, limit) };
      });
    },
  },
  {
    pattern: /^\/schedules$/,
    async page(deps, ctx) {
      return readOnly(deps, async (tx) => ({ body: schedulesPage({ ...ctx, dbNow: await dbNow(tx) }, await listSchedules(tx)) }));
    },
  },
];

async function renderError(deps: RouteDeps, res: ServerResponse, session: Session | null, path: string, status: number, message: string): Promise<void> {
  const now = await readOnly(deps, dbNow).catch(() => new Date(deps.clock.now()));
  send(res, status, errorPage({ session, path, dbNow: now }, status >= 500 ? 'Something went wrong' : 'Refused', message));
}

function statusOf(err: unknown): number {
  if (err instanceof HttpError) return err.status;
  if (err instanceof ValidationError) return 400;
  return 500;
}

/** One request, start to finish. Never throws: every failure becomes an escaped error page. */
export async function handleRequest(deps: RouteDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://dashboard.invalid');
  const access: Access = deps.auth.check(req, url);
  if (access.kind === 'refused') {
    send(res, 401, 'this dashboard needs its access token: open the URL it printed at start (…/?token=…), or send Authorization: Bearer <token>\n', 'text/plain; charset=utf-8');
    return;
  }
  if (access.kind === 'login') {
    url.searchParams.delete('token');
    redirect(res, url.pathname + url.search, { 'set-cookie': deps.auth.cookieHeader(access.session) });
    return;
  }
  const session = access.kind === 'session' ? access.session : null;
  const path = url.pathname;
  try {
    if (req.method === 'POST') {
      const verb = /^\/actions\/([a-z-]+)$/.exec(path)?.[1];
      if (!verb) throw new HttpError(405, `POST is only for /actions/<verb>; ${path} is read with GET`);
      await handleAction(deps, req, res, access, verb);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, `${req.method} is not served; pages are GET, changes are POST to /actions/<verb>`);
    if (path === '/') return redirect(res, '/queues');
    if (path === '/style.css') return send(res, 200, STYLESHEET, 'text/css; charset=utf-8');
    // Browsers ask for it on their own; a 404 would read as a broken page.
    if (path === '/favicon.ico') return send(res, 204, '', 'image/x-icon');
    if (path.startsWith('/actions/')) throw new HttpError(405, 'a change needs a POST from the dashboard page (with its CSRF token), never a GET');
    const route = PAGES.find((p) => p.pattern.test(path));
    if (!route) throw new HttpError(404, `no page at ${path}`);
    const { status, body } = await route.page(deps, { session, path: path + url.search }, url);
    send(res, status ?? 200, body);
  } catch (err) {
    const status = statusOf(err);
    const message = redactSecrets((err as Error).message);
    if (status >= 500) deps.log.warn('dashboard request failed', { path, error: message });
    await renderError(deps, res, session, path, status, message);
  }
}

async function handleAction(deps: RouteDeps, req: IncomingMessage, res: ServerResponse, access: Access, verbName: string): Promise<void> {
  const form = await readForm(req);
  const refusal = deps.auth.refusePost(req, access, form);
  if (refusal) throw new HttpError(403, refusal);
  const session = (access as { session: Session }).session;
  const verb = Object.hasOwn(VERBS, verbName) ? VERBS[verbName] : undefined;
  if (!verb) throw new HttpError(404, `no control verb "${verbName}"; expected one of ${Object.keys(VERBS).join(', ')}`);
  const args = verb.parse(form);
  const back = safeBack(form.get('back'));
  if (form.get('confirm') !== 'yes') {
    const now = await readOnly(deps, dbNow);
    send(res, 200, confirmPage({ session, path: back, dbNow: now }, verbName, verb.label, verb.describe(args), form, back, verb.inputs));
    return;
  }
  const by = form.get('by')?.trim() ?? '';
  const reason = form.get('reason')?.trim() ?? '';
  if (!by) throw new ValidationError('by', 'is missing; say who is making this change');
  if (!reason) throw new ValidationError('reason', 'is missing; say why, it is recorded with the change');
  session.operator = by;
  try {
    const outcome = await verb.run(deps.db, args, { by, reason });
    deps.log.info('control verb', { verb: verbName, args, by, reason });
    session.flash = { kind: 'ok', text: outcome };
  } catch (err) {
    deps.log.warn('control verb refused', { verb: verbName, args, by, error: (err as Error).message });
    session.flash = { kind: 'error', text: redactSecrets((err as Error).message) };
  }
  redirect(res, back);
}
