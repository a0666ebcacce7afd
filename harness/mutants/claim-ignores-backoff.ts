import { queryPatch, type Mutant } from './types.ts';

/**
 * The claim takes a failed job as due at once: a retry in backoff is claimed
 * the moment its failure is written, as a claim that filtered run_at only for
 * fresh jobs would. Retries hammer the dependency that just failed, and a
 * job out of luck burns its whole budget in a second.
 */
export const claimIgnoresBackoff: Mutant = {
  breaks: "the claim ignores a failed job's run_at, so retries start during their backoff",
  caughtBy: 'no-early-start',
  scenario: 'slow-worker',
  changes: [
    queryPatch('engine/worker/worker.sql', 'ClaimJobs', [
      {
        find: "                AND j.state IN ('pending', 'failed') AND j.run_at <= now() AND j.crash_count = 0\n              ORDER BY j.run_at, j.id",
        replace: "                AND j.state IN ('pending', 'failed') AND (j.state = 'failed' OR j.run_at <= now()) AND j.crash_count = 0\n              ORDER BY j.run_at, j.id",
      },
      {
        find: "     AND j.state IN ('pending', 'failed') AND j.run_at <= now() AND j.crash_count = 0\n   ORDER BY j.priority * $5::float8",
        replace: "     AND j.state IN ('pending', 'failed') AND (j.state = 'failed' OR j.run_at <= now()) AND j.crash_count = 0\n   ORDER BY j.priority * $5::float8",
      },
    ]),
  ],
};
