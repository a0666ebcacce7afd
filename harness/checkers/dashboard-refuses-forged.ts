import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf } from '../history.ts';
import { FORGERIES } from '../runner/dashboard-client.ts';
import { changedAnyway } from './operator-actions.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export type DashboardRefusesForgedBounds = Record<string, never>;

/**
 * The dashboard's door (docs/dashboard.md, "Access"): a change needs the
 * access token's session, a POST naming this server in its Origin, and the
 * session's CSRF token. Judged over the forged requests the run sent beside
 * the operator's own dashboard actions (`dashboard:forged`: the same verb on
 * the same targets, confirmed, by GET, with no session, without the CSRF
 * token, with another one, from a foreign Origin): each must be answered
 * with its refusal (405 for a GET, 401 with no session, 403 otherwise),
 * and must have changed nothing: no audit row with its reason, and no
 * target moved into what the verb makes of it (a job cancelled, dead-lettered
 * or due again; a queue paused or its limits set). Unknown when no forged
 * request was sent or the final state has no audit.
 */
export function checkDashboardRefusesForged(history: readonly HistoryEvent[], final: FinalState): InvariantResult {
  const forged = eventsOf(history, 'dashboard:forged');
  const base = { name: 'dashboard-refuses-forged', bound: 'every forged request refused with its status, no audit row, no target changed' };
  const judged = { n: forged.length, what: 'forged requests' };
  if (!final.audit) return { ...base, pass: 'unknown', figure: 'the final state has no audit (a run stored before it was read)', judged: { ...judged, n: 0 } };
  const audited = new Set(final.audit.map((r) => r.reason));
  const bad: Record<string, unknown>[] = [];
  for (const f of forged) {
    const wrong = [
      ...(f.status !== FORGERIES[f.forgery] ? [`answered ${f.status}, expected ${FORGERIES[f.forgery]}: ${f.answer.slice(0, 120)}`] : []),
      ...(audited.has(f.reason) ? ['audited'] : []),
      ...changedAnyway(f).map(({ change, ...target }) => `${'jobId' in target ? `job ${target.jobId}` : `queue ${target.queue}`}: ${change}`),
    ];
    if (wrong.length) bad.push({ forgery: f.forgery, verb: f.verb, ...(f.queue !== undefined ? { queue: f.queue } : {}), jobIds: f.jobIds, wrong });
  }
  const by = Object.keys(FORGERIES).map((k) => `${k} ${fmt(forged.filter((f) => f.forgery === k).length)}`).join(', ');
  return {
    ...base,
    pass: bad.length > 0 ? false : forged.length === 0 ? 'unknown' : true,
    figure: `${fmt(forged.length)} forged requests (${by}); ${fmt(bad.length)} got through or changed something`,
    judged,
    ...(bad.length ? { examples: firstN(bad) } : {}),
  };
}

export const dashboardRefusesForged: CheckerDef<DashboardRefusesForgedBounds> = {
  name: 'dashboard-refuses-forged',
  says: "the dashboard refuses an action by GET, a POST with no session, without its CSRF token, with a wrong one or from a foreign Origin, and such a request changes nothing",
  check: checkDashboardRefusesForged,
  bounds: {},
  defaults: {},
};
