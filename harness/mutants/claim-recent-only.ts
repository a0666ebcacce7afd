import { queryPatch, type Mutant } from './types.ts';

/**
 * The claim's lane probe is bounded to jobs due within the last 10 minutes
 * (an "optimisation" that narrows the index range scan). Ordinary traffic is
 * never that late, so nothing looks wrong, until a backlog ages past the
 * bound: then those jobs are never claimed, the oldest-unclaimed-age alert
 * fires and never clears. In poison-herd the database clock steps an hour,
 * so the herd is due up to an hour ago.
 */
export const claimRecentOnly: Mutant = {
  breaks: 'the claim skips jobs due more than 10 minutes ago, so a backlog that aged past it is never claimed and its alert never clears',
  caughtBy: 'declared-alerts',
  scenario: 'poison-herd',
  changes: [
    queryPatch('engine/worker/worker.sql', 'ClaimJobs', [
      {
        find: "AND j.run_at <= now() AND j.crash_count = 0\n              ORDER BY j.run_at, j.id",
        replace: "AND j.run_at <= now() AND j.run_at > now() - interval '10 minutes' AND j.crash_count = 0\n              ORDER BY j.run_at, j.id",
      },
    ]),
  ],
};
