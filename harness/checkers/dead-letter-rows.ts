import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export type DeadLetterRowsBounds = Record<string, never>;

/**
 * A dead job is one an operator can find: every job the final state shows
 * `dead` has its row in stampede.dead_letters, and every dead-letter row
 * belongs to a job that is dead (not one that was retried and finished
 * after being dead-lettered). Unknown when no job died.
 */
export function checkDeadLetterRows(_history: readonly HistoryEvent[], final: FinalState): InvariantResult {
  const dead = final.jobs.filter((j) => j.state === 'dead');
  const rows = new Set(final.deadLetters.map((d) => d.jobId));
  const deadIds = new Set(dead.map((j) => j.id));
  const withoutRow = dead.filter((j) => !rows.has(j.id)).map((j) => j.id);
  const notDead = [...rows].filter((id) => !deadIds.has(id));
  // Each dead job could lack its row, each row could belong to a job not dead.
  const judged = { n: dead.length + notDead.length, what: 'dead jobs and dead-letter rows' };
  const base = { name: 'dead-letter-rows', bound: 'each dead job has exactly its dead-letter row, and each row a dead job', judged };
  if (dead.length === 0 && rows.size === 0) return { ...base, pass: 'unknown', figure: 'no dead job: nothing to judge' };
  const examples = [...firstN(withoutRow).map((jobId) => ({ deadWithoutRow: jobId })), ...firstN(notDead).map((jobId) => ({ rowForJobNotDead: jobId }))];
  return {
    ...base,
    pass: examples.length === 0,
    figure: `${fmt(dead.length)} dead jobs, ${fmt(rows.size)} dead-letter rows: ${fmt(withoutRow.length)} dead without a row, ${fmt(notDead.length)} rows for a job not dead`,
    ...(examples.length ? { examples } : {}),
  };
}

export const deadLetterRows: CheckerDef<DeadLetterRowsBounds> = {
  name: 'dead-letter-rows',
  says: 'every dead job has its dead-letter row, and every dead-letter row a dead job',
  check: checkDeadLetterRows,
  bounds: {},
  defaults: {},
};
