import { queryPatch, type Mutant } from './types.ts';

/**
 * The heartbeat renews by job id alone, not by its lease token: a worker
 * resumed after a freeze extends the lease of the worker that took its job
 * over, and never learns that it lost it. ($2 stays referenced so it prepares.)
 */
export const renewalUnfenced: Mutant = {
  breaks: 'lease renewal is not fenced on the lease token, so a stale holder renews the new owner\'s lease and runs on',
  // Not shown by the gate since the worker gives a lease up once a whole lease has passed since its last
  // renewal was sent (issue 41): a frozen or cut-off holder now stops before its lease can end on the
  // database clock, so no stale holder reaches a renewal after a takeover, and the unfenced renewal has
  // nothing to overwrite. Catching it needs a holder whose own clock runs slow against the database's.
  caughtBy: null,
  awaits: 'lease-fencing, on a scenario whose worker clock runs slow against the database (a stale holder that still renews after a takeover)',
  scenario: 'worker-crash',
  changes: [
    queryPatch('engine/worker/worker.sql', 'RenewLease', [
      { find: "WHERE id = $1 AND lease_token = $2 AND state = 'claimed'", replace: "WHERE id = $1 AND $2::uuid IS NOT NULL AND state = 'claimed'" },
    ]),
  ],
};
