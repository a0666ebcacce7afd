import { queryPatch, type Mutant } from './types.ts';

/**
 * A unit slip in the archiver's age test (the milliseconds divided by
 * 10,000, not 1,000): done jobs move to job_history a tenth of the
 * configured age after they finished, so the idempotency window their key
 * gives (ARCHIVE_DEFAULTS.archiveAfterMs) is a tenth of what was promised.
 * Runs in the archiver process.
 */
export const archiveTooYoung: Mutant = {
  breaks: 'the archiver moves done jobs a tenth of --archive-after-ms after they finished, cutting the idempotency window short',
  caughtBy: 'archive-once',
  scenario: 'effects-pipeline',
  runsIn: 'archiver',
  changes: [
    queryPatch('engine/archive/archive.sql', 'ArchiveBatch', [
      { find: 'finished_at < now() - make_interval(secs => $1::float8 / 1000)', replace: 'finished_at < now() - make_interval(secs => $1::float8 / 10000)' },
    ]),
  ],
};
