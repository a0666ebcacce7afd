import { queryPatch, type Mutant } from './types.ts';

/**
 * The heartbeat renews by job id alone, not by its lease token: a worker
 * whose renewal comes late (its clock slow) extends the lease of the worker
 * that took its job over, and never learns that it lost it. ($2 stays referenced so it prepares.)
 */
export const renewalUnfenced: Mutant = {
  breaks: 'lease renewal is not fenced on the lease token, so a stale holder renews the new owner\'s lease and runs on',
  // Caught where a live holder still renews after a takeover: a worker whose clock runs slow (slow-clock),
  // so its heartbeat comes after its lease ran out on the database clock and another worker took the job.
  // (A frozen or cut-off holder gives its lease up first: its own deadline passes while it cannot renew.)
  caughtBy: 'lease-fencing',
  scenario: 'slow-clock',
  changes: [
    queryPatch('engine/worker/worker.sql', 'RenewLease', [
      { find: "WHERE id = $1 AND lease_token = $2 AND state = 'claimed'", replace: "WHERE id = $1 AND $2::uuid IS NOT NULL AND state = 'claimed'" },
    ]),
  ],
};
