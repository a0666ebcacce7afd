import { queryPatch, type Mutant } from './types.ts';

/**
 * Idempotency keys are cut to their first 6 characters before the conflict
 * check (a column narrowed to fit an index, a "normalisation" of keys):
 * distinct keys that share a prefix collapse onto one job. The later
 * enqueues are acknowledged with the first job's id and never run.
 * Runs in the scenario runner, whose load generator enqueues.
 */
export const enqueueKeyTruncated: Mutant = {
  breaks: 'enqueue compares only the first 6 characters of an idempotency key, so distinct jobs sharing a prefix collapse onto one and the rest are acknowledged but never run',
  caughtBy: 'no-job-lost',
  scenario: 'steady',
  runsIn: 'runner',
  changes: [
    queryPatch('engine/enqueue.sql', 'EnqueueOne', [
      { find: '          $5,\n', replace: '          left($5, 6),\n' },
      { find: 'AND idempotency_key = $5 AND', replace: 'AND idempotency_key = left($5, 6) AND' },
    ]),
  ],
};
