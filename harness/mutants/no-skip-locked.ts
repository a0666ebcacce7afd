import { queryPatch, type Mutant } from './types.ts';

/**
 * The claim without its lock step (no FOR UPDATE SKIP LOCKED, no re-check of
 * the row's state): two claims that read the same due rows both update them,
 * the second waiting for the first and then overwriting its claim. A claim
 * still skips rows already finished, so the transition trigger does not
 * refuse the whole statement and hide the double claim.
 */
export const noSkipLocked: Mutant = {
  breaks: 'claims lock rows without SKIP LOCKED and without re-checking state, so two workers can take the same job',
  caughtBy: 'no-concurrent-claim',
  scenario: 'steady',
  changes: [
    queryPatch('engine/worker/worker.sql', 'ClaimJobs', [
      {
        find: `
     AND j.state IN ('pending', 'failed') AND j.run_at <= now() AND j.crash_count = 0
   ORDER BY j.priority * $5::float8 - date_part('epoch', j.run_at) * 1000 DESC
   LIMIT (SELECT $2)
     FOR UPDATE OF j SKIP LOCKED`,
        replace: `
   ORDER BY j.priority * $5::float8 - date_part('epoch', j.run_at) * 1000 DESC
   LIMIT (SELECT $2)`,
      },
      { find: ' AND j.queue = q.queue\n', replace: " AND j.queue = q.queue AND j.state IN ('pending', 'failed', 'claimed')\n" },
    ]),
  ],
};
