import { migrationFunction } from './migration-function.ts';
import type { Mutant } from './types.ts';

const NAME = 'partitions-ahead-a-day-short';

/**
 * stampede.create_job_history_partitions as migration 0006 made it, with its
 * loop's end off by one day: it creates partitions up to today + ahead_days - 1,
 * so the archive holds a day fewer ahead than partitionsAheadDays promises
 * (and with partitionsAheadDays 1, a midnight can find no partition for the
 * rows the next pass moves). Read from the migration and edited there, as
 * retention-a-day-short is.
 */
const shortLoopBody = () =>
  migrationFunction(NAME, '0006_archive.sql', 'stampede.create_job_history_partitions', [
    { find: 'WHILE day <= today + ahead_days LOOP', replace: 'WHILE day < today + ahead_days LOOP' },
  ]);

export const partitionsAheadADayShort: Mutant = {
  breaks: 'the archiver creates day partitions up to today + partitionsAheadDays - 1, not through today + partitionsAheadDays, so it keeps a day fewer ahead than promised',
  caughtBy: 'archive-retention',
  scenario: 'archive-retention',
  // The database's function is replaced by the runner; the archiver is the process that calls it.
  runsIn: 'archiver',
  changes: [{ kind: 'database', replaces: 'stampede.create_job_history_partitions(integer, date, timestamp with time zone)', sql: shortLoopBody }],
};
