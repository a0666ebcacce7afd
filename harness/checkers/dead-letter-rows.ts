import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export type DeadLetterRowsBounds = Record<string, never>;

/**
 * A dead job is one an operator can find: every job the final state shows
 * `dead` has its row in stampede.dead_letters, and every dead-letter row
 * belongs to a job that is dead (not one that was retried and finished
 * after being dead-lettered). Unknown when no job died.
 */
export function checkDeadLetterRows(history: readonly HistoryEvent[], final: FinalState): InvariantResult {
  const dead = final.jobs.filter((j) => j.state === 'dead');
  const rows = new Set(final.deadLetters.map((d) => d.jobId));
  const deadIds = new Set(dead.map((j) => j.id));
  const withoutRow = dead.filter((j) => !rows.has(j.id)).map((j) => j.id);
  const notDead = [...rows].filter((id) => !deadIds.has(id));
  const byHand = wrongHandReasons(history, final);
  // Each dead job could lack its row (or, dead-lettered by hand, the operator's reason), each row could belong to a job not dead.
  const judged = { n: dead.length + notDead.length, what: 'dead jobs and dead-letter rows' };
  const base = { name: 'dead-letter-rows', bound: "each dead job has exactly its dead-letter row, and each row a dead job; one dead-lettered by hand gives the operator's reason", judged };
  if (dead.length === 0 && rows.size === 0) return { ...base, pass: 'unknown', figure: 'no dead job: nothing to judge' };
  const examples = [
    ...firstN(withoutRow).map((jobId) => ({ deadWithoutRow: jobId })),
    ...firstN(notDead).map((jobId) => ({ rowForJobNotDead: jobId })),
    ...firstN(byHand.wrong),
  ];
  return {
    ...base,
    pass: examples.length === 0,
    figure:
      `${fmt(dead.length)} dead jobs, ${fmt(rows.size)} dead-letter rows: ${fmt(withoutRow.length)} dead without a row, ${fmt(notDead.length)} rows for a job not dead; ` +
      `${fmt(byHand.judged)} dead-lettered by hand, ${fmt(byHand.wrong.length)} without the operator's reason`,
    ...(examples.length ? { examples } : {}),
  };
}

/**
 * Jobs an operator dead-lettered by hand (an accepted `dead-letter` verb)
 * and not redriven or retried afterwards: each must be dead with the reason
 * deadLetterJob documents, "dead-lettered by <by>: <reason>".
 */
function wrongHandReasons(history: readonly HistoryEvent[], final: FinalState): { judged: number; wrong: Record<string, unknown>[] } {
  const reasons = new Map(final.deadLetters.map((d) => [d.jobId, d.reason]));
  const byHand = new Map<number, string>();
  for (const e of history) {
    if (e.type !== 'operator:action' || e.outcome !== 'ok') continue;
    if (e.verb === 'dead-letter') for (const id of e.jobIds) byHand.set(id, `dead-lettered by ${e.by}: ${e.reason}`);
    if (e.verb === 'redrive' || e.verb === 'retry') for (const id of e.jobIds) byHand.delete(id);
  }
  const wrong = [...byHand]
    .filter(([id, expected]) => reasons.get(id) !== expected)
    .map(([jobId, expected]) => ({ jobId, deadLetteredByHand: expected, row: reasons.get(jobId) ?? null }));
  return { judged: byHand.size, wrong };
}

export const deadLetterRows: CheckerDef<DeadLetterRowsBounds> = {
  name: 'dead-letter-rows',
  says: 'every dead job has its dead-letter row, and every dead-letter row a dead job',
  check: checkDeadLetterRows,
  bounds: {},
  defaults: {},
};
