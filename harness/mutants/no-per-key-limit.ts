import { queryPatch, type Mutant } from './types.ts';

/**
 * The claim's fair pick is told no key has a cap: the walk still shares
 * claims across keys, but a key with jobs due takes as many slots as the
 * turns give it, and a suspect is claimed whatever its key holds.
 */
export const noPerKeyLimit: Mutant = {
  breaks: "claims ignore a queue's maxInFlightPerKey, so one tenant holds more jobs in flight than its cap",
  caughtBy: 'per-key-limit',
  scenario: 'noisy-tenant',
  changes: [
    queryPatch('engine/worker/worker.sql', 'ClaimJobs', [
      { find: 'stampede.fair_pick(g.queue, g.per_key,', replace: 'stampede.fair_pick(g.queue, 1000000,' },
    ]),
    queryPatch('engine/worker/worker.sql', 'ClaimSuspect', [{ find: 'AND (g.per_key IS NULL OR j.fairness_key IS NULL', replace: 'AND (true OR j.fairness_key IS NULL' }]),
  ],
};
