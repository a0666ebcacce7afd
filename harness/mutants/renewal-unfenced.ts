import { queryPatch, type Mutant } from './types.ts';

/**
 * The heartbeat renews by job id alone, not by its lease token: a worker
 * resumed after a freeze extends the lease of the worker that took its job
 * over, and never learns that it lost it. ($2 stays referenced so it prepares.)
 */
export const renewalUnfenced: Mutant = {
  breaks: 'lease renewal is not fenced on the lease token, so a stale holder renews the new owner\'s lease and runs on',
  caughtBy: 'lease-fencing',
  scenario: 'worker-crash',
  changes: [
    queryPatch('engine/worker/worker.sql', 'RenewLease', [
      { find: "WHERE id = $1 AND lease_token = $2 AND state = 'claimed'", replace: "WHERE id = $1 AND $2::uuid IS NOT NULL AND state = 'claimed'" },
    ]),
  ],
};
