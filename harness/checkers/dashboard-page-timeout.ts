import { DASHBOARD } from '../../engine/dashboard/server.ts';
import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf } from '../history.ts';
import { cutWindows } from './fault-windows.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface DashboardPageTimeoutBounds {
  /** The page's statement_timeout the dashboard was served with, ms: DashboardServer.statementTimeoutMs's declared default unless a scenario says. */
  statementTimeoutMs: number;
  /** How long after its timeout a page may take to answer (the error page, the request's own way), ms. */
  slackMs: number;
  /** A read is judged only when the lock was still held this long past its send plus the timeout, ms. */
  lockLeftMs: number;
}

/**
 * The dashboard gives up a page's query after its statement timeout
 * (DashboardServer.statementTimeoutMs): a page opened while a migration or an
 * operator's LOCK TABLE holds the jobs table answers (an error page) once the
 * timeout passes, rather than hang with the lock, holding a connection.
 * Judged over the harness's reads of the queues page (answered,
 * `dashboard:queues`, or not, `dashboard:queues-failed`) sent while a
 * lock-jobs-table fault held the table and that the lock outlasted by the
 * timeout plus `lockLeftMs`: each must have answered within the timeout plus
 * `slackMs`. A read that answered well before its timeout was not held by
 * the lock (its queries did not reach the table, or it was refused at once)
 * and is not judged. Unknown when no read was held by a lock long enough to
 * show the timeout.
 */
export function checkDashboardPageTimeout(history: readonly HistoryEvent[], _final: FinalState, bounds: DashboardPageTimeoutBounds): InvariantResult {
  const { statementTimeoutMs: timeout, slackMs, lockLeftMs } = bounds;
  const locks = cutWindows(history, new Set(['lock-jobs-table']));
  const reads = [
    ...eventsOf(history, 'dashboard:queues').map((r) => ({ sentAt: r.sentAt, t: r.t, answered: 'the page' })),
    ...eventsOf(history, 'dashboard:queues-failed').map((r) => ({ sentAt: r.sentAt, t: r.t, answered: `${r.status}: ${r.message}` })),
  ];
  const wrong: { t: number; tookMs: number; answered: string; lock: string }[] = [];
  let judged = 0;
  let inLocks = 0;
  for (const r of reads) {
    const lock = locks.find((w) => r.sentAt >= w.fromT && r.sentAt < w.toT);
    if (!lock) continue;
    inLocks++;
    const tookMs = r.t - r.sentAt;
    // Held by the lock: it answered (the page or an error) no sooner than half a second before its timeout could
    // have passed. A read the lock did not reach, or one refused at once for another reason, answers in milliseconds.
    const held = tookMs >= timeout - 500;
    if (!held || lock.toT - r.sentAt < timeout + lockLeftMs) continue;
    judged++;
    if (tookMs > timeout + slackMs) {
      wrong.push({ t: Math.round(r.t), tookMs: Math.round(tookMs), answered: r.answered.slice(0, 120), lock: `fault ${lock.seq} held ${fmt(lock.toT - lock.fromT)} ms, from ${fmt(r.sentAt - lock.fromT)} ms before the send` });
    }
  }
  return {
    name: 'dashboard-page-timeout',
    pass: wrong.length > 0 ? false : judged === 0 ? 'unknown' : true,
    figure: `${fmt(reads.length)} reads of the queues page, ${fmt(inLocks)} sent while the jobs table was locked, ${fmt(judged)} held by the lock past its timeout; ${fmt(wrong.length)} answered late`,
    bound: `a page held by a lock answers within its statement timeout (${fmt(timeout)} ms) + ${fmt(slackMs)} ms`,
    judged: { n: judged, what: 'reads of the queues page held by a lock on the jobs table that outlasted the timeout' },
    ...(wrong.length ? { examples: firstN(wrong) } : {}),
  };
}

export const dashboardPageTimeout: CheckerDef<DashboardPageTimeoutBounds> = {
  name: 'dashboard-page-timeout',
  says: "a dashboard page held by a lock on the jobs table answers once its statement timeout passes, instead of waiting for the lock",
  check: checkDashboardPageTimeout,
  bounds: { statementTimeoutMs: 'number', slackMs: 'number', lockLeftMs: 'number' },
  // The runner serves the dashboard at its defaults: the declared timeout is the one the page must keep.
  defaults: { statementTimeoutMs: DASHBOARD.options.statementTimeoutMs.default, slackMs: 1_500, lockLeftMs: 2_000 },
};
