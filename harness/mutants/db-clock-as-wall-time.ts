import { queryPatch, type Mutant } from './types.ts';

/**
 * The scheduler node reads the database clock as a wall time without a zone
 * (`timestamp`, not `timestamptz`), rendered in some zone and parsed as the
 * node's local time: every node measures a skew of many hours, so healthy
 * nodes refuse to materialize (a timestamp/timestamptz slip of a refactor).
 * The zone is +14 h so that no machine's local zone cancels it.
 */
export const dbClockAsWallTime: Mutant = {
  breaks: 'scheduler nodes read the database clock as a zoneless wall time, so nodes within their tolerance measure hours of skew and refuse',
  caughtBy: 'cron-skew-refusal',
  scenario: 'cron-skew',
  runsIn: 'scheduler',
  changes: [queryPatch('engine/cron/materializer.sql', 'DbNow', [{ find: 'SELECT now() AS now;', replace: "SELECT (now() AT TIME ZONE 'Pacific/Kiritimati') AS now;" }])],
};
