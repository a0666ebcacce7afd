import { queryPatch, type Mutant } from './types.ts';

/**
 * The batch claim forgets to leave suspects (jobs in flight when a worker
 * died) to the one-at-a-time suspect claim: a poison job runs beside a batch
 * of innocent ones, and each of its crashes is charged to all of them.
 */
export const suspectsInBatches: Mutant = {
  breaks: 'suspects are claimed in ordinary batches, so a poison job crashes innocent jobs beside it',
  caughtBy: 'crash-loop-isolation',
  scenario: 'poison-herd',
  changes: [
    queryPatch('engine/worker/worker.sql', 'ClaimJobs', [
      { find: "AND j.run_at <= now() AND j.crash_count = 0\n      ORDER BY j.run_at, j.id", replace: "AND j.run_at <= now() AND j.crash_count >= 0\n      ORDER BY j.run_at, j.id" },
      { find: "AND j.run_at <= now() AND j.crash_count = 0\n   ORDER BY c.score DESC", replace: "AND j.run_at <= now() AND j.crash_count >= 0\n   ORDER BY c.score DESC" },
    ]),
  ],
};
