import { networkInterfaces } from 'node:os';
import type { EventOf } from '../../history.ts';
import { DashboardProcess } from '../../runner/dashboard-cli.ts';
import { freeLoopbackPort } from '../../runner/local-http.ts';
import { evidence, injected, type Injector } from './context.ts';

/** How long `stampede dashboard` may take to print its address (a node start on a loaded machine). */
const START_TIMEOUT_MS = 15_000;

/** How long one probe may take before it counts as failed (neither answered nor refused). */
const PROBE_TIMEOUT_MS = 3_000;

/** How long the process may take to exit after SIGTERM before it is killed. */
const STOP_GRACE_MS = 5_000;

/** Redirects a probe follows, carrying the session cookie: the login's (to the page without the token), then / to /queues. */
const MAX_REDIRECTS = 4;

/** A token no dashboard was given, as long as a real one (32 base64url characters). */
const WRONG_TOKEN = 'not-the-token-this-dashboard-had';

/**
 * This machine's non-loopback addresses: where the dashboard must not listen unless told to. IPv6 link-local
 * addresses are left out (a connection needs their zone, and nothing binds them by default).
 */
export function offLoopbackAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((addresses) => addresses ?? [])
    .filter((a) => !a.internal && !(a.family === 'IPv6' && /^fe[89ab]/i.test(a.address)))
    .map((a) => a.address);
}

type Answer = Pick<EventOf<'dashboard:probe'>, 'outcome' | 'status' | 'error'>;

/**
 * GET `url` as a browser would: following the dashboard's redirects with the session cookie a login sets, up to
 * MAX_REDIRECTS. The status of the last answer; refused when nothing listens there; failed on anything else.
 */
async function visit(url: string): Promise<Answer> {
  let next = url;
  let cookie = '';
  try {
    for (let hop = 0; ; hop++) {
      const res = await fetch(next, { redirect: 'manual', headers: cookie ? { cookie } : {}, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
      await res.arrayBuffer();
      cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] || cookie;
      const location = res.headers.get('location');
      if (res.status !== 303 || location === null || hop === MAX_REDIRECTS) return { outcome: 'answered', status: res.status, error: null };
      next = new URL(location, next).href;
    }
  } catch (err) {
    const code = (err as { cause?: { code?: string } }).cause?.code;
    return code === 'ECONNREFUSED' ? { outcome: 'refused', status: null, error: null } : { outcome: 'failed', status: null, error: code ?? (err as Error).message };
  }
}

/** `host:port` in a URL: an IPv6 address in brackets. */
const hostPort = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`;

/**
 * An operator starts `stampede dashboard` at the command line: its own process, the real CLI, against the run's
 * database, with no --host (the default) and a --port the harness found free on loopback, no token given. The
 * harness reads the address it prints and tries it: with the printed token (the page must answer), without one
 * and with a wrong one (refused, 401); then the same port on each non-loopback address of the machine, with the
 * printed token (nothing may listen there). Each try is recorded (`dashboard:probe`); then SIGTERM, and what it
 * printed and its exit (`dashboard:cli`). dashboard-bound-as-told judges them. It bit when the process printed an
 * address and was tried there.
 */
export const startDashboardCli: Injector = async (action, ctx) => {
  const askedPort = await freeLoopbackPort();
  const offLoopback = offLoopbackAddresses();
  injected(ctx, action, { askedPort, offLoopback });
  const dashboard = new DashboardProcess(ctx.dashboardCli, ctx.url, ['--port', String(askedPort)]);
  let printed: string | null = null;
  let login: URL | null = null;
  let token: string | null = null;
  let tried = 0;
  let exitCode: number | null;
  // The token stays out of the history: the probes name it by what it was (printed, none, wrong).
  const shown = (url: string) => (token ? url.replace(encodeURIComponent(token), '<token>') : url);
  const probe = async (url: string, where: EventOf<'dashboard:probe'>['where'], tokenSent: EventOf<'dashboard:probe'>['token']) => {
    const answer = await visit(url);
    ctx.recorder.record({ type: 'dashboard:probe', node: 'operator-cli', seq: action.seq, url: shown(url), where, token: tokenSent, ...answer });
    tried++;
  };
  try {
    printed = await dashboard.address(ctx.clock, START_TIMEOUT_MS, ctx.signal);
    login = printed === null ? null : URL.canParse(printed) ? new URL(printed) : null;
    if (login !== null) {
      token = login.searchParams.get('token');
      await probe(login.href, 'printed', 'printed');
      await probe(`${login.origin}/`, 'printed', 'none');
      await probe(`${login.origin}/?token=${WRONG_TOKEN}`, 'printed', 'wrong');
      for (const address of offLoopback) await probe(`http://${hostPort(address, Number(login.port))}/?token=${encodeURIComponent(token ?? '')}`, 'off-loopback', 'printed');
    }
  } finally {
    exitCode = await dashboard.stop(ctx.clock, STOP_GRACE_MS);
  }
  // An interrupted run's dashboard may not have printed yet: that is the interrupt's doing, not the CLI's.
  if (printed === null && ctx.signal.aborted) return;
  ctx.recorder.record({
    type: 'dashboard:cli',
    node: 'operator-cli',
    seq: action.seq,
    askedPort,
    printed: printed === null ? null : `stampede dashboard: open ${shown(printed)}`,
    host: login ? login.hostname.replace(/^\[(.*)\]$/, '$1') : null,
    port: login ? Number(login.port) : null,
    tokenChars: token === null ? null : token.length,
    tokenBase64url: token === null ? null : /^[A-Za-z0-9_-]+$/.test(token),
    offLoopback,
    exitCode,
    stderr: dashboard.stderr,
  });
  if (login && tried) evidence(ctx, action, { askedPort, printed: login.host, tried });
};
