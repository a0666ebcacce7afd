import { queryPatch, type Mutant } from './types.ts';

/** A unit slip in the heartbeat: each renewal extends the lease by twice leaseMs, so a dead worker holds its jobs twice as long. */
export const renewalDoublesLease: Mutant = {
  breaks: 'a renewal sets the lease to twice leaseMs (a unit slip), so a crashed worker keeps its jobs twice as long',
  caughtBy: 'parameters-honoured',
  scenario: 'slow-worker',
  changes: [
    queryPatch('engine/worker/worker.sql', 'RenewLease', [
      { find: 'SET lease_expires_at = now() + make_interval(secs => $3::float8 / 1000)', replace: 'SET lease_expires_at = now() + make_interval(secs => $3::float8 / 500)' },
    ]),
  ],
};
