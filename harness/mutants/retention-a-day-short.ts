import { migrationFunction } from './migration-function.ts';
import type { Mutant } from './types.ts';

const NAME = 'retention-a-day-short';

/**
 * stampede.drop_job_history_partitions as migration 0006 made it, with its
 * test off by one day: a partition is dropped once its day *begins*
 * retention_days before today, not once it has ended by then, so history
 * keeps a day less than retentionDays promises. Read from the (forward-only)
 * migration and edited there, so a change to the function fails the patch
 * instead of testing the real one.
 */
const offByOneBody = () =>
  migrationFunction(NAME, '0006_archive.sql', 'stampede.drop_job_history_partitions', [
    { find: "'YYYYMMDD') + 1 <= cutoff", replace: "'YYYYMMDD') <= cutoff" },
  ]);

export const retentionADayShort: Mutant = {
  breaks: 'retention drops the day partition that still lies within retentionDays (day <= today - retention, not day + 1), so history keeps a day less than promised',
  caughtBy: 'archive-retention',
  scenario: 'archive-retention',
  // The database's function is replaced by the runner; the archiver is the process that calls it.
  runsIn: 'archiver',
  changes: [{ kind: 'database', replaces: 'stampede.drop_job_history_partitions(integer, timestamp with time zone)', sql: offByOneBody }],
};
