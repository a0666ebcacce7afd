import { queryPatch, type Mutant } from './types.ts';

const CLAIM_CHARGE = { find: 'attempts = j.attempts + 1,', replace: 'attempts = j.attempts,' };

/**
 * Attempts charged when a failure is recorded instead of at claim: a job that
 * kills its worker records no failure, so it never uses an attempt up, and
 * its lease expiries are not counted as crashes either.
 */
export const chargeOnFailure: Mutant = {
  breaks: 'attempts are charged only when a failure is recorded, so a job that kills its worker never uses one up and is never counted as a crash',
  caughtBy: 'dead-letter-routing',
  scenario: 'poison-herd',
  changes: [
    queryPatch('engine/worker/worker.sql', 'ClaimJobs', [CLAIM_CHARGE]),
    queryPatch('engine/worker/worker.sql', 'ClaimSuspect', [CLAIM_CHARGE]),
    queryPatch('engine/worker/worker.sql', 'FailJob', [
      {
        find: 'SET state = CASE WHEN j.attempts >= j.max_attempts',
        replace: 'SET attempts = j.attempts + 1,\n         state = CASE WHEN j.attempts + 1 >= j.max_attempts',
      },
      { find: 'finished_at = CASE WHEN j.attempts >= j.max_attempts', replace: 'finished_at = CASE WHEN j.attempts + 1 >= j.max_attempts' },
    ]),
    queryPatch('engine/worker/worker.sql', 'ReleaseJobs', [{ find: 'attempts = greatest(j.attempts - 1, 0),', replace: 'attempts = j.attempts,' }]),
    queryPatch('engine/worker/rescuer.sql', 'RescueExpiredLeases', [
      { find: 'SET crash_count = j.crash_count + CASE WHEN expired.dead THEN 1 ELSE 0 END,', replace: 'SET crash_count = j.crash_count,' },
      {
        find: `                   WHEN j.attempts >= j.max_attempts THEN 'dead'
                   WHEN expired.dead AND j.crash_count + 1 >= $2 THEN 'dead'`,
        replace: `                   WHEN false AND j.crash_count + 1 >= $2 THEN 'dead'`,
      },
      {
        find: 'finished_at = CASE WHEN j.attempts >= j.max_attempts OR (expired.dead AND j.crash_count + 1 >= $2) THEN now() END,',
        replace: 'finished_at = CASE WHEN false AND j.crash_count + 1 >= $2 THEN now() END,',
      },
    ]),
  ],
};
