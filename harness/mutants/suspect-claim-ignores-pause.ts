import { queryPatch, type Mutant } from './types.ts';

/**
 * The suspects' claim path lost its pause filter (ClaimJobs kept its own):
 * a job that crashed its worker is claimed again, alone, from a queue an
 * operator paused, as soon as a worker drains for it.
 */
export const suspectClaimIgnoresPause: Mutant = {
  breaks: "a paused queue's suspects are still claimed (the suspects' claim path ignores the pause), so a crash loop resumes in a queue the operator paused",
  caughtBy: 'paused-queue-idle',
  scenario: 'operator-chaos',
  changes: [
    queryPatch('engine/worker/worker.sql', 'SuspectsWaiting', [
      { find: '\n   AND NOT EXISTS (SELECT 1 FROM stampede.queue_settings s WHERE s.queue = j.queue AND s.paused)', replace: '' },
    ]),
    queryPatch('engine/worker/worker.sql', 'ClaimSuspect', [{ find: 'WHERE NOT g.paused AND', replace: 'WHERE (true OR NOT g.paused) AND' }]),
  ],
};
