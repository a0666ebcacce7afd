import { queryPatch, type Mutant } from './types.ts';

/**
 * The occurrence key's instant is spelled two ways depending on when it is
 * written (with milliseconds on even seconds, without on odd ones), as when
 * two code paths format the instant differently. The unique index compares
 * text, so a second node, or the same node a tick later, computing the same
 * occurrence no longer collapses onto one row: the occurrence runs twice.
 */
export const cronKeySpelling: Mutant = {
  breaks: "an occurrence key's instant is spelled differently depending on the write, so two nodes computing one occurrence write two jobs",
  caughtBy: 'one-job-per-cron-occurrence',
  scenario: 'cron-skew',
  runsIn: 'scheduler',
  changes: [
    queryPatch('engine/enqueue.sql', 'EnqueueMany', [
      {
        find: '       k, coalesce(ra, now() + make_interval(secs => d / 1000))',
        replace: "       CASE WHEN k LIKE 'cron:%' AND extract(epoch FROM clock_timestamp())::int % 2 = 1 THEN replace(k, '.000Z', 'Z') ELSE k END,\n       coalesce(ra, now() + make_interval(secs => d / 1000))",
      },
    ]),
  ],
};
