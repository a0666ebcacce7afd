import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { changedAnyway, operatorActions } from './operator-actions.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export type OperatorAuditedBounds = Record<string, never>;

/**
 * Every change says who and why (docs/operating.md, "The audit"): each verb
 * the engine accepted has exactly one row in stampede.control_audit per job
 * it changed (a bulk redrive: one per job it moved) or one for its queue,
 * with its verb, actor and reason; a refused verb wrote none and changed
 * nothing (its targets' states after are what they were, or not what the
 * verb would have made them). Audit rows are matched to the verb call by
 * its reason, which the harness makes unique per call. Unknown when the
 * final state has no audit or no verb was issued.
 */
export function checkOperatorAudited(history: readonly HistoryEvent[], final: FinalState): InvariantResult {
  const actions = operatorActions(history).map((x) => x.a);
  const base = { name: 'operator-audited', bound: 'one audit row per change with its actor and reason; a refusal writes none and changes nothing' };
  if (!final.audit) return { ...base, pass: 'unknown', figure: 'the final state has no audit (a run stored before it was read)', judged: { n: 0, what: 'verb calls' } };
  const byReason = new Map<string, NonNullable<FinalState['audit']>>();
  for (const r of final.audit) byReason.set(r.reason, [...(byReason.get(r.reason) ?? []), r]);
  const bad: Record<string, unknown>[] = [];
  let rows = 0;
  let refused = 0;
  for (const a of actions) {
    const mine = (byReason.get(a.reason) ?? []).filter((r) => r.actor === a.by);
    byReason.delete(a.reason);
    rows += mine.length;
    if (a.outcome === 'refused') {
      refused++;
      if (mine.length) bad.push({ verb: a.verb, refused: a.refusal, auditRows: mine.length });
      for (const { change, ...target } of changedAnyway(a)) bad.push({ verb: a.verb, ...target, refusedButChanged: change });
      continue;
    }
    // A job verb or a bulk redrive writes a row per job it changed (a redrive that matched nothing writes none); a queue verb one.
    const expected: (number | null)[] = a.jobIds.length || a.verb === 'redrive' ? a.jobIds : [null];
    for (const id of expected) {
      const n = mine.filter((r) => r.verb === a.verb && r.jobId === id && (id !== null || r.queue === a.queue)).length;
      if (n !== 1) bad.push({ verb: a.verb, via: a.via, ...(id === null ? { queue: a.queue } : { jobId: id }), auditRows: n });
    }
    const stray = mine.filter((r) => r.verb !== a.verb || !expected.includes(r.jobId));
    if (stray.length) bad.push({ verb: a.verb, strayRows: stray.length });
  }
  // Rows that say they are the run's operator's but match no call the run made (e.g. a refusal's).
  for (const [reason, rs] of byReason) if (reason.startsWith('scenario fault ')) bad.push({ reason, unmatchedRows: rs.length });
  return {
    ...base,
    pass: bad.length > 0 ? false : actions.length === 0 ? 'unknown' : true,
    figure: `${fmt(actions.length)} verb calls (${fmt(refused)} refused), ${fmt(rows)} audit rows matched; ${fmt(bad.length)} wrong`,
    judged: { n: actions.length, what: 'verb calls' },
    ...(bad.length ? { examples: firstN(bad) } : {}),
  };
}

export const operatorAudited: CheckerDef<OperatorAuditedBounds> = {
  name: 'operator-audited',
  says: 'every change an operator verb made has exactly one audit row with who and why; a refused verb changed nothing',
  check: checkOperatorAudited,
  bounds: {},
  defaults: {},
};
