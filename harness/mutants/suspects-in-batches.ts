import { queryPatch, type Mutant } from './types.ts';

/**
 * Suspects (jobs in flight when a worker died) are no longer told apart: the
 * worker never sees one waiting, so it never drains to run one alone, and the
 * batch claim takes them with everything else. A poison job runs beside a
 * batch of innocent ones, and each of its crashes is charged to all of them.
 */
export const suspectsInBatches: Mutant = {
  breaks: 'suspects are claimed in ordinary batches, so a poison job crashes innocent jobs beside it',
  caughtBy: 'crash-loop-isolation',
  scenario: 'poison-herd',
  changes: [
    queryPatch('engine/worker/worker.sql', 'SuspectsWaiting', [{ find: 'AND j.crash_count > 0\n   AND NOT EXISTS', replace: 'AND j.crash_count > 0 AND false\n   AND NOT EXISTS' }]),
    queryPatch('engine/worker/worker.sql', 'ClaimJobs', [
      { find: "AND j.run_at <= now() AND j.crash_count = 0\n              ORDER BY j.run_at, j.id", replace: "AND j.run_at <= now() AND j.crash_count >= 0\n              ORDER BY j.run_at, j.id" },
      { find: "AND j.run_at <= now() AND j.crash_count = 0\n   ORDER BY j.priority * $5::float8", replace: "AND j.run_at <= now() AND j.crash_count >= 0\n   ORDER BY j.priority * $5::float8" },
    ]),
  ],
};
