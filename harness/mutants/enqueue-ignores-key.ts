import { queryPatch, type Mutant } from './types.ts';

/**
 * Enqueue stores no idempotency key (a refactor that dropped the column from
 * the INSERT), so the conflict check never fires: a producer that re-sends
 * an enqueue whose answer it lost creates a second job. Runs in the scenario
 * runner, whose producers enqueue.
 */
export const enqueueIgnoresKey: Mutant = {
  breaks: 'enqueue writes no idempotency key, so an enqueue re-sent after a lost answer creates a second job',
  caughtBy: 'idempotent-enqueue',
  scenario: 'effects-pipeline',
  runsIn: 'runner',
  changes: [queryPatch('engine/enqueue.sql', 'EnqueueOne', [{ find: '          $5,\n', replace: '          NULL::text,\n' }])],
};
