import { queryPatch, type Mutant } from './types.ts';

/**
 * The claim takes over claimed rows whose lease is about to expire, without
 * waiting for the rescuer (a shortcut some queues take, here with its
 * comparison a second early): the jobs of a killed worker are taken while
 * their lease still runs.
 */
export const claimStealsExpiringLeases: Mutant = {
  breaks: 'the claim takes over leases that expire within a second, before they have ended',
  caughtBy: 'no-early-takeover',
  scenario: 'worker-crash',
  changes: [
    queryPatch('engine/worker/worker.sql', 'ClaimJobs', [
      {
        find: "                AND j.state IN ('pending', 'failed') AND j.run_at <= now() AND j.crash_count = 0\n              ORDER BY j.run_at, j.id",
        replace:
          "                AND (j.state IN ('pending', 'failed') AND j.run_at <= now() OR j.state = 'claimed' AND j.lease_expires_at < now() + interval '1 second') AND j.crash_count = 0\n              ORDER BY j.run_at, j.id",
      },
      {
        find: "     AND j.state IN ('pending', 'failed') AND j.run_at <= now() AND j.crash_count = 0\n   ORDER BY j.priority * $5::float8",
        replace:
          "     AND (j.state IN ('pending', 'failed') AND j.run_at <= now() OR j.state = 'claimed' AND j.lease_expires_at < now() + interval '1 second') AND j.crash_count = 0\n   ORDER BY j.priority * $5::float8",
      },
    ]),
  ],
};
