import { DEFAULTS } from '../../engine/defaults.ts';
import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface AttemptBudgetBounds {
  /** Jobs that took their queue's budget a run must show before it is judged. */
  minQueueBudgeted: number;
}

/**
 * Every job carries the attempt budget it was promised at enqueue: its own
 * maxAttempts when it gave one, else its queue's (setQueueMaxAttempts), else
 * the default (DEFAULTS.maxAttempts). Judged on the final rows of the jobs the
 * generator acknowledged, against what the harness itself gave each enqueue
 * (`enqueue:ok`'s `ownBudget`) and set per queue before the load
 * (`setup:queue-budget`), never on what the engine says it applied. A job the
 * final state does not hold (or holds without its budget) is not judged. Unknown when fewer than
 * `minQueueBudgeted` jobs took their queue's budget: the promise's situation
 * (a queue budget and jobs without their own) did not happen. attempt-accounting
 * judges each job against the budget on its row; this judges the row's budget.
 */
export function checkAttemptBudget(history: readonly HistoryEvent[], final: FinalState, bounds: AttemptBudgetBounds): InvariantResult {
  const queueBudget = new Map<string, number>();
  for (const e of eventsOf(history, 'setup:queue-budget')) queueBudget.set(e.queue, e.maxAttempts);
  const rows = new Map(final.jobs.map((j) => [j.id, j]));
  const wrong: { jobId: number; queue: string; expected: number; actual: number; from: string }[] = [];
  let fromQueue = 0;
  let own = 0;
  for (const e of eventsOf(history, 'enqueue:ok')) {
    if (e.ownBudget === undefined) continue;
    const row = rows.get(e.jobId);
    if (row?.maxAttempts === undefined) continue;
    const q = queueBudget.get(e.queue);
    const [expected, from] = e.ownBudget !== null ? [e.ownBudget, 'its own'] : q !== undefined ? [q, 'its queue'] : [DEFAULTS.maxAttempts, 'the default'];
    if (from === 'its queue') fromQueue++;
    else own++;
    if (row.maxAttempts !== expected) wrong.push({ jobId: e.jobId, queue: e.queue, expected, actual: row.maxAttempts, from });
  }
  const judged = fromQueue + own;
  const tooFew = fromQueue < bounds.minQueueBudgeted;
  return {
    name: 'attempt-budget-as-set',
    pass: wrong.length > 0 ? false : tooFew ? 'unknown' : true,
    figure: `${fmt(wrong.length)} of ${fmt(judged)} jobs with another budget than promised; ${fmt(fromQueue)} took their queue's (${[...queueBudget].map(([q, n]) => `${q}: ${n}`).join(', ') || 'none set'}), ${fmt(own)} their own or the default`,
    bound: `each job's maxAttempts: its own, else its queue's, else ${DEFAULTS.maxAttempts}; at least ${fmt(bounds.minQueueBudgeted)} jobs taking their queue's`,
    judged: { n: judged, what: "acknowledged jobs' attempt budgets" },
    ...(wrong.length ? { examples: firstN(wrong) } : {}),
  };
}

export const attemptBudgetAsSet: CheckerDef<AttemptBudgetBounds> = {
  name: 'attempt-budget-as-set',
  says: "each job's attempt budget is its own, else its queue's (setQueueMaxAttempts), else the default",
  check: checkAttemptBudget,
  bounds: { minQueueBudgeted: 'number' },
  defaults: { minQueueBudgeted: 20 },
};
