import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface DashboardFreshRoundBounds {
  /**
   * Slack on each side of the freshness line, ms: a round's recorded instant is its row's write (the host's
   * clock), its age is measured by the page's query somewhere between the read's send and its answer.
   */
  marginMs: number;
}

/**
 * The dashboard's queues page shows the elected sampler's round while it is
 * fresh (younger than its sharedRoundMaxAgeMs) and runs its own round only when
 * none is (engine/dashboard/routes.ts latestRound). Judged over the harness's
 * reads of the page (`dashboard:queues`) beside the rounds the sampler wrote
 * (`sampler:round`): a read that ran its own round while the latest round
 * written before it was surely still fresh at its answer is a recomputation
 * the page promised not to make (N dashboards would cost N rounds); a read
 * that showed a shared round must show one a sampler wrote, not one surely
 * stale by its send, nor one older than a round written before its send
 * (the row keeps only the latest). "Surely" is `marginMs` either side.
 * Inconclusive without rounds or reads, or when no read found a fresh round.
 */
export function checkDashboardFreshRound(history: readonly HistoryEvent[], _final: FinalState, bounds: DashboardFreshRoundBounds): InvariantResult {
  const rounds = eventsOf(history, 'sampler:round').sort((a, b) => a.t - b.t);
  const byNo = new Map(rounds.map((r) => [r.roundNo, r]));
  const reads = eventsOf(history, 'dashboard:queues');
  const m = bounds.marginMs;
  const wrong: { t: number; showed: string; why: string }[] = [];
  let shared = 0;
  let own = 0;
  for (const r of reads) {
    // The newest round surely written before the page's query began.
    const before = rounds.filter((w) => w.t <= r.sentAt - m).at(-1);
    if (r.source === 'own') {
      own++;
      if (before && r.t - before.t < r.maxAgeMs - m) wrong.push({ t: Math.round(r.t), showed: 'its own round', why: `round ${before.roundNo} by ${before.leader} was ${fmt(r.t - before.t)} ms old at the answer (fresh under ${fmt(r.maxAgeMs)} ms)` });
      continue;
    }
    shared++;
    const w = r.roundNo === undefined ? undefined : byNo.get(r.roundNo);
    const showed = `round ${r.roundNo} by ${r.leader}`;
    if (!w) wrong.push({ t: Math.round(r.t), showed, why: 'no sampler wrote that round' });
    else if (r.sentAt - w.t > r.maxAgeMs + m) wrong.push({ t: Math.round(r.t), showed, why: `written ${fmt(r.sentAt - w.t)} ms before the read: stale (over ${fmt(r.maxAgeMs)} ms)` });
    else if (before && before.roundNo > w.roundNo) wrong.push({ t: Math.round(r.t), showed, why: `round ${before.roundNo} had replaced it before the read` });
  }
  return {
    name: 'dashboard-shows-fresh-round',
    pass: wrong.length > 0 ? false : rounds.length === 0 || reads.length === 0 || shared === 0 ? 'unknown' : true,
    figure: `${fmt(reads.length)} reads of the queues page: ${fmt(shared)} showed the elected sampler's round, ${fmt(own)} ran their own; ${fmt(rounds.length)} rounds written; ${fmt(wrong.length)} wrong`,
    bound: `its own round only when no round was fresh (± ${fmt(m)} ms); a shared round that a sampler wrote, fresh and the latest`,
    judged: { n: reads.length, what: 'reads of the queues page beside the elected sampler\'s rounds' },
    ...(wrong.length ? { examples: firstN(wrong) } : {}),
  };
}

export const dashboardShowsFreshRound: CheckerDef<DashboardFreshRoundBounds> = {
  name: 'dashboard-shows-fresh-round',
  says: "the dashboard's queues page shows the elected sampler's round while it is fresh and runs its own only when none is",
  check: checkDashboardFreshRound,
  bounds: { marginMs: 'number' },
  defaults: { marginMs: 1_000 },
};
