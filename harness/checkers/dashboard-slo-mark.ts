import { DASHBOARD } from '../../engine/dashboard/server.ts';
import type { EventOf, FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface DashboardSloMarkBounds {
  /** The objective the dashboard was served with, ms: DashboardServer.sloMs's declared default unless a scenario says. */
  sloMs: number;
  /** Harness samples this near the round's instant (either side) are the truth the page is judged by, ms. */
  windowMs: number;
  /** Slack beyond each sample's distance from the round before a queue is surely over or surely under, ms. */
  marginMs: number;
}

/** A queue's age by the harness's own reading at `t` (harness/runner/harness.sql HarnessQueueState; 0: nothing due). */
interface AgeAt {
  t: number;
  ageMs: number;
}

/**
 * The dashboard marks a queue whose oldest unclaimed job is older than its
 * SLO, and only such a queue (engine/dashboard/pages/queues.ts). Judged over
 * the harness's reads of the queues page (`dashboard:queues`): each row's mark
 * against the harness's own reading of that queue's oldest due, unclaimed job
 * (`sample.harness`, never the engine's sampler, whose round the page shows)
 * at the instant the page's round was taken (the read's send, less the shared
 * round's age). A queue is surely over when every harness sample within
 * `windowMs` of that instant, less its distance from it and `marginMs`, is
 * over the SLO (the age grows no faster than time); surely under when every
 * one, plus its distance and the margin, is under. A surely-over queue the
 * page did not mark (or did not show), or a surely-under one it marked, is a
 * violation; a queue near the line is not judged. Unknown unless both sides
 * were judged: a page that never had a queue over its SLO to mark proves
 * nothing about the mark.
 */
export function checkDashboardSloMark(history: readonly HistoryEvent[], _final: FinalState, bounds: DashboardSloMarkBounds): InvariantResult {
  const samples = eventsOf(history, 'sample')
    .filter((s): s is EventOf<'sample'> & { harness: NonNullable<EventOf<'sample'>['harness']> } => s.harness !== undefined)
    .sort((a, b) => a.t - b.t);
  const reads = eventsOf(history, 'dashboard:queues');
  const { sloMs, windowMs, marginMs } = bounds;
  const wrong: { t: number; queue: string; shown: string; truth: string }[] = [];
  let over = 0;
  let under = 0;
  for (const r of reads) {
    // The round's instant: an own round ran between the send and the answer; a shared one was ageMs old at the page's query.
    const roundT = r.source === 'shared' ? r.sentAt - (r.ageMs ?? 0) : (r.sentAt + r.t) / 2;
    const spread = r.source === 'shared' ? r.t - r.sentAt : (r.t - r.sentAt) / 2;
    const near = samples.filter((s) => Math.abs(s.t - roundT) <= windowMs);
    if (near.length === 0) continue;
    const queues = new Set([...Object.keys(r.queues), ...near.flatMap((s) => Object.keys(s.harness.oldestUnclaimedAgeMs))]);
    for (const queue of queues) {
      const ages: AgeAt[] = near.map((s) => ({ t: s.t, ageMs: s.harness.oldestUnclaimedAgeMs[queue] ?? 0 }));
      const slack = (a: AgeAt) => Math.abs(a.t - roundT) + spread + marginMs;
      const surelyOver = ages.every((a) => a.ageMs - slack(a) > sloMs);
      const surelyUnder = ages.every((a) => a.ageMs + slack(a) < sloMs);
      if (!surelyOver && !surelyUnder) continue;
      const row = r.queues[queue];
      const truth = `${surelyOver ? 'over' : 'under'} (harness: ${ages.map((a) => `${fmt(a.ageMs)} ms at ${fmt(a.t - roundT)} ms`).join(', ')})`;
      if (surelyOver) over++;
      else under++;
      if (surelyOver && !row?.overSlo) wrong.push({ t: Math.round(r.t), queue, shown: row ? `${fmt(row.oldestMs)} ms, not marked` : 'no row', truth });
      if (surelyUnder && row?.overSlo) wrong.push({ t: Math.round(r.t), queue, shown: `${fmt(row.oldestMs)} ms, marked over`, truth });
    }
  }
  const missing = over === 0 ? 'no queue was surely over the SLO at a read' : under === 0 ? 'no queue was surely under the SLO at a read' : '';
  return {
    name: 'dashboard-slo-mark',
    pass: wrong.length > 0 ? false : missing ? 'unknown' : true,
    figure: `${fmt(reads.length)} reads of the queues page: ${fmt(over)} rows surely over the SLO, ${fmt(under)} surely under; ${fmt(wrong.length)} marked wrong${missing && !wrong.length ? ` (${missing})` : ''}`,
    bound: `a queue marked over the SLO (${fmt(sloMs)} ms) exactly when its oldest due, unclaimed job is older, by the harness's reading (± its distance and ${fmt(marginMs)} ms)`,
    judged: { n: over + under, what: 'queue rows of the queues page surely over or under the SLO' },
    ...(wrong.length ? { examples: firstN(wrong) } : {}),
  };
}

export const dashboardSloMark: CheckerDef<DashboardSloMarkBounds> = {
  name: 'dashboard-slo-mark',
  says: "the dashboard's queues page marks a queue over its SLO exactly when its oldest due, unclaimed job is older than the SLO",
  check: checkDashboardSloMark,
  bounds: { sloMs: 'number', windowMs: 'number', marginMs: 'number' },
  // The runner serves the dashboard at its defaults: the declared objective is the one the page must keep.
  defaults: { sloMs: DASHBOARD.options.sloMs.default, windowMs: 1_500, marginMs: 1_000 },
};
