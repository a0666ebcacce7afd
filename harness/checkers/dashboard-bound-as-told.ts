import { DASHBOARD } from '../../engine/dashboard/server.ts';
import type { EventOf, FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface DashboardBoundAsToldBounds {
  /** The host `stampede dashboard` with no --host must print and listen on alone. Default: DashboardServer.host's declared default. */
  host: string;
  /** The least length of the random token it prints, in base64url characters. Default 32 (24 bytes, 192 bits). */
  minTokenChars: number;
}

/** What each probe must meet: the page with the printed token, 401 without one or with a wrong one, nothing off loopback. */
function expected(p: EventOf<'dashboard:probe'>): { outcome: 'answered' | 'refused'; status: number | null; words: string } {
  if (p.where === 'off-loopback') return { outcome: 'refused', status: null, words: 'connection refused (nothing listens there)' };
  return p.token === 'printed' ? { outcome: 'answered', status: 200, words: 'the page (200)' } : { outcome: 'answered', status: 401, words: 'refused (401)' };
}

/**
 * `stampede dashboard` listens where it is told, 127.0.0.1 by default, behind a random token (the dashboard-cli
 * fault: the CLI started with no --host and a --port the harness chose). Per start (`dashboard:cli`): it printed an
 * address whose host is `host` and whose port is the one asked, with a token of at least `minTokenChars` base64url
 * characters, and exited 0 on SIGTERM. Per probe (`dashboard:probe`): the printed address with the printed token
 * answered the page (200, after the login's redirects); without a token or with a wrong one, 401; the same port on
 * each non-loopback address of the machine refused the connection. A probe that failed otherwise (a timeout) is not
 * judged. Inconclusive without a start, or unless a probe with the printed token and one without it were judged; a
 * machine with no non-loopback address leaves the off-loopback half unjudged, and the figure says so.
 */
export function checkDashboardBoundAsTold(history: readonly HistoryEvent[], _final: FinalState, bounds: DashboardBoundAsToldBounds): InvariantResult {
  const starts = eventsOf(history, 'dashboard:cli');
  const probes = eventsOf(history, 'dashboard:probe');
  const bad: Record<string, unknown>[] = [];
  for (const s of starts) {
    const where = { start: s.seq, askedPort: s.askedPort };
    if (s.printed === null) {
      bad.push({ ...where, printed: 'nothing', exitCode: s.exitCode, stderr: s.stderr.trim().split('\n').slice(-3).join(' | '), expected: 'stampede dashboard: open http://<host>:<port>/?token=…' });
      continue;
    }
    if (s.host !== bounds.host) bad.push({ ...where, printed: s.printed, host: s.host, expected: `host ${bounds.host} (no --host given)` });
    if (s.port !== s.askedPort) bad.push({ ...where, printed: s.printed, port: s.port, expected: `port ${s.askedPort} (--port)` });
    if ((s.tokenChars ?? 0) < bounds.minTokenChars || !s.tokenBase64url) {
      bad.push({ ...where, printed: s.printed, tokenChars: s.tokenChars, base64url: s.tokenBase64url, expected: `a random token of at least ${bounds.minTokenChars} base64url characters` });
    }
    if (s.exitCode !== 0) bad.push({ ...where, exitCode: s.exitCode, stderr: s.stderr.trim().split('\n').slice(-3).join(' | '), expected: 'exit 0 on SIGTERM' });
  }
  const judged = probes.filter((p) => p.outcome !== 'failed');
  for (const p of judged) {
    const want = expected(p);
    if (p.outcome !== want.outcome || (want.status !== null && p.status !== want.status)) {
      bad.push({ start: p.seq, url: p.url, token: p.token, outcome: p.outcome, status: p.status, expected: want.words });
    }
  }
  const failed = probes.length - judged.length;
  const loopback = judged.filter((p) => p.where === 'printed');
  const offLoopback = judged.filter((p) => p.where === 'off-loopback');
  const noAddress = starts.some((s) => s.printed !== null && s.offLoopback.length === 0);
  const base = {
    name: 'dashboard-bound-as-told',
    bound: `printed host ${bounds.host} and the port asked, a token of ${bounds.minTokenChars}+ characters; the page with it, 401 without; nothing off loopback; exit 0 on SIGTERM`,
    judged: { n: judged.length, what: 'connections to the dashboard started at the command line' },
  };
  const parts = [
    `${fmt(loopback.length)} at the printed address`,
    noAddress && !offLoopback.length ? 'the off-loopback half unjudged: this machine has no non-loopback address' : `${fmt(offLoopback.length)} off loopback`,
    ...(failed ? [`${fmt(failed)} failed otherwise (not judged)`] : []),
  ];
  const figure = `${fmt(bad.length)} wrong; ${fmt(starts.length)} start(s), probes: ${parts.join(', ')}`;
  if (bad.length) return { ...base, pass: false, figure, examples: firstN(bad) };
  if (!starts.length) return { ...base, pass: 'unknown', figure: 'no dashboard was started at the command line: nothing to judge' };
  const withToken = loopback.some((p) => p.token === 'printed');
  const withoutIt = loopback.some((p) => p.token !== 'printed');
  if (!withToken || !withoutIt) return { ...base, pass: 'unknown', figure: `${figure}; needs a judged probe with the printed token and one without it` };
  return { ...base, pass: true, figure };
}

export const dashboardBoundAsTold: CheckerDef<DashboardBoundAsToldBounds> = {
  name: 'dashboard-bound-as-told',
  says: '`stampede dashboard` listens where it is told (127.0.0.1 with no --host, the --port asked), behind a random token, and nowhere else',
  check: checkDashboardBoundAsTold,
  bounds: { host: 'string', minTokenChars: 'number' },
  // The dashboard-cli fault gives no --host: the declared default is where it must listen.
  defaults: { host: DASHBOARD.options.host.default, minTokenChars: 32 },
};
