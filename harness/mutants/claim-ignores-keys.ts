import { queryPatch, type Mutant } from './types.ts';

/**
 * The claim treats a fair queue as a plain one: its keyed jobs come in due
 * order from the lanes' probes, and stampede.fair_pick is never called. A
 * tenant that enqueued a flood first is served first, all of it.
 */
export const claimIgnoresKeys: Mutant = {
  breaks: "claims ignore a fair queue's keys and take its jobs in due order, so one tenant's flood starves the others",
  caughtBy: 'tenant-fairness',
  scenario: 'noisy-tenant',
  changes: [
    queryPatch('engine/worker/worker.sql', 'ClaimJobs', [
      { find: 'WHERE g.per_key IS NULL OR l.fairness_key IS NULL', replace: 'WHERE true' },
      { find: 'WHERE g.per_key IS NOT NULL AND NOT g.paused AND g.allowance > 0', replace: 'WHERE false' },
    ]),
  ],
};
