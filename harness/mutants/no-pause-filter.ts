import { queryPatch, type Mutant } from './types.ts';

/** The claims no longer drop paused queues (stampede.claim_gate still reports them paused). */
export const noPauseFilter: Mutant = {
  breaks: 'claims ignore a pause, so workers keep starting jobs of a queue an operator paused',
  caughtBy: 'paused-queue-idle',
  scenario: 'downstream-limit',
  changes: [
    queryPatch('engine/worker/worker.sql', 'ClaimJobs', [{ find: '   WHERE NOT g.paused\n   ORDER BY c.score DESC', replace: '   WHERE (true OR NOT g.paused)\n   ORDER BY c.score DESC' }]),
    queryPatch('engine/worker/worker.sql', 'ClaimSuspect', [{ find: 'WHERE NOT g.paused AND', replace: 'WHERE (true OR NOT g.paused) AND' }]),
  ],
};
