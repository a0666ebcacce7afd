import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface CronSkewRefusalBounds {
  /** Scheduler nodes (`scheduler-<i>`) the scenario pushes past their skew tolerance: each must refuse. Default []. */
  mustRefuse: string[];
}

const isClockFaultOn = (e: HistoryEvent, node: string) =>
  e.type === 'fault:injected' && (e.fault === 'clock-skew' || e.fault === 'clock-jump' || e.fault === 'dst') && e.detail.target === node;

/**
 * A scheduler node whose clock is off the database's by more than its
 * tolerance refuses to materialize (docs/cron-dst.md, "Many nodes, no
 * leader"), and the scenario that pushes one there expects exactly that:
 *
 * - each node in `mustRefuse` records `cron:refused` after a clock fault hit
 *   it, and writes nothing (`cron:materialized`) from its first refusal until
 *   a later clock fault moves it again;
 * - no other node refuses (its clock was within tolerance: refusing would
 *   leave the work to the others for no reason).
 *
 * Unknown when nothing is expected to refuse and no node reported at all,
 * or a declared node's clock fault was skipped (no live process).
 */
export function checkCronSkewRefusal(history: readonly HistoryEvent[], _final: FinalState, bounds: CronSkewRefusalBounds): InvariantResult {
  const problems: Record<string, unknown>[] = [];
  const skipped: string[] = [];
  let refusals = 0;
  const refusedBy = new Set<string>();
  for (const e of history) {
    if (e.type !== 'cron:refused') continue;
    refusals++;
    refusedBy.add(e.node);
  }
  for (const node of bounds.mustRefuse) {
    const faults = history.map((e, i) => ({ e, i })).filter(({ e }) => isClockFaultOn(e, node));
    if (faults.length && faults.every(({ e }) => e.type === 'fault:injected' && e.detail.skipped)) {
      skipped.push(node);
      continue;
    }
    const hitAt = faults.find(({ e }) => e.type === 'fault:injected' && !e.detail.skipped)?.i ?? -1;
    const first = history.findIndex((e, i) => i > hitAt && e.type === 'cron:refused' && e.node === node);
    if (hitAt < 0 || first < 0) {
      problems.push({ node, problem: hitAt < 0 ? 'no clock fault hit it' : 'never refused after its clock fault' });
      continue;
    }
    const movedAgain = faults.find(({ i }) => i > first)?.i ?? history.length;
    const wrote = history.filter((e, i) => i > first && i < movedAgain && e.type === 'cron:materialized' && e.node === node);
    if (wrote.length) problems.push({ node, problem: `materialized ${wrote.length}x while refusing`, firstAtMs: wrote[0].t });
  }
  for (const node of refusedBy) if (!bounds.mustRefuse.includes(node)) problems.push({ node, problem: 'refused although no fault pushed it past its tolerance' });
  const reporters = new Set(history.flatMap((e) => (e.type === 'cron:materialized' || e.type === 'cron:refused' ? [e.node] : [])));
  const reporting = reporters.size > 0;
  // Judged: each node that had to refuse (its clock fault not skipped), and each other node that reported, which must not have.
  const judged = bounds.mustRefuse.length - skipped.length + [...reporters].filter((n) => !bounds.mustRefuse.includes(n)).length;
  const figure =
    `${fmt(refusals)} refusals by ${[...refusedBy].sort().join(', ') || 'no node'}; expected from ${bounds.mustRefuse.join(', ') || 'no node'}` +
    (problems.length ? `; ${fmt(problems.length)} broken` : '') +
    (skipped.length ? `; clock fault skipped on ${skipped.join(', ')}` : '');
  let pass: boolean | 'unknown';
  if (problems.length) pass = false;
  else if (skipped.length || (bounds.mustRefuse.length === 0 && !reporting)) pass = 'unknown';
  else pass = true;
  return {
    name: 'cron-skew-refusal',
    pass,
    figure,
    bound: 'each node pushed past its tolerance refuses and writes nothing while refusing; no other node refuses',
    judged: { n: judged, what: 'scheduler nodes' },
    ...(problems.length ? { examples: firstN(problems) } : {}),
  };
}

export const cronSkewRefusal: CheckerDef<CronSkewRefusalBounds> = {
  name: 'cron-skew-refusal',
  says: 'a scheduler node pushed past its skew tolerance refuses and writes nothing meanwhile; a node within it never refuses',
  check: checkCronSkewRefusal,
  bounds: { mustRefuse: 'string[]' },
  defaults: { mustRefuse: [] },
};
