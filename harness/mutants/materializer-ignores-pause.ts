import { queryPatch, type Mutant } from './types.ts';

/**
 * The materializer's list of schedules loses its `enabled` filter, as when a
 * query is rewritten to list every schedule for another use: a paused
 * schedule is materialized as if it ran, so the operator's pause stops
 * nothing.
 */
export const materializerIgnoresPause: Mutant = {
  breaks: 'the cron materializer lists every schedule, paused or not, so a paused schedule goes on writing its occurrences',
  caughtBy: 'schedule-paused-idle',
  scenario: 'operator-chaos',
  runsIn: 'scheduler',
  changes: [queryPatch('engine/cron/materializer.sql', 'EnabledSchedules', [{ find: 'WHERE enabled ', replace: '' }])],
};
