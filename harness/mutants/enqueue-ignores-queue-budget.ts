import { queryPatch, type Mutant } from './types.ts';

/**
 * Enqueue's budget coalesce loses its middle term (a "simplified"
 * coalesce($4, $8)): a job that gives no maxAttempts takes the default, not
 * its queue's setQueueMaxAttempts, so a queue set to retry less (or more)
 * retries as if nobody had set it. Runs in the scenario runner, whose
 * producers enqueue.
 */
export const enqueueIgnoresQueueBudget: Mutant = {
  breaks: "enqueue ignores the queue's attempt budget (setQueueMaxAttempts): a job that gives none takes the default",
  caughtBy: 'attempt-budget-as-set',
  scenario: 'retry-storm',
  runsIn: 'runner',
  changes: [
    queryPatch('engine/enqueue.sql', 'EnqueueOne', [
      { find: 'coalesce($4::int, (SELECT max_attempts FROM stampede.queue_settings WHERE queue = $1), $8::int)', replace: 'coalesce($4::int, $8::int)' },
    ]),
  ],
};
