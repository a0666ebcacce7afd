import { queryPatch, type Mutant } from './types.ts';

/**
 * The rescuer takes a lease that ran out while its worker was alive as a job
 * that worker must have finished, and marks it done: nobody completed it, its
 * effect may never have happened, and it is never run again.
 */
export const rescueFinishesLiveHolder: Mutant = {
  breaks: "a lease that expired under a live worker is marked done, though no attempt completed",
  caughtBy: 'no-phantom-finish',
  scenario: 'slow-worker-no-heartbeat',
  changes: [
    queryPatch('engine/worker/rescuer.sql', 'RescueExpiredLeases', [
      { find: "                   ELSE 'failed'\n", replace: "                   WHEN NOT expired.dead THEN 'done'\n                   ELSE 'failed'\n" },
      {
        find: 'finished_at = CASE WHEN j.attempts >= j.max_attempts OR (expired.dead AND j.crash_count + 1 >= $2) THEN now() END,',
        replace: 'finished_at = CASE WHEN j.attempts >= j.max_attempts OR NOT expired.dead OR (expired.dead AND j.crash_count + 1 >= $2) THEN now() END,',
      },
    ]),
  ],
};
