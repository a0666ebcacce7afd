import { queryPatch, type Mutant } from './types.ts';

/**
 * The rescuer codes every job it kills `lease_expired`, as a refactor that
 * took "the rescuer's deaths are lease expiries" for the rule would: a crash
 * loop's conviction is filed under an expired lease, so `redrive --code
 * crash_loop` finds none of the poison and an operator reads a stall where
 * there is a poison pill.
 */
export const rescueCodesLeaseExpired: Mutant = {
  breaks: "every job the rescuer kills is coded lease_expired, a crash loop's conviction too",
  caughtBy: 'dead-letter-codes',
  scenario: 'poison-herd',
  changes: [
    queryPatch('engine/worker/rescuer.sql', 'RescueExpiredLeases', [
      {
        find: "CASE WHEN j.attempts >= j.max_attempts THEN 'lease_expired' ELSE 'crash_loop' END AS dead_code",
        replace: "'lease_expired'::text AS dead_code",
      },
    ]),
  ],
};
