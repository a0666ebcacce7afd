import { queryPatch, type Mutant } from './types.ts';

/** The claims ignore each limited queue's allowance from stampede.claim_gate: every worker fills its free slots. */
export const noQueueLimit: Mutant = {
  breaks: "claims ignore a queue's global in-flight limit, so a fleet sends the downstream as many calls at once as it has slots",
  caughtBy: 'downstream-in-flight',
  scenario: 'downstream-limit',
  changes: [
    queryPatch('engine/worker/worker.sql', 'ClaimJobs', [{ find: 'LIMIT least(coalesce(g.allowance, (SELECT $2 * 4)), (SELECT $2 * 4))', replace: 'LIMIT (SELECT $2 * 4)' }]),
    queryPatch('engine/worker/worker.sql', 'ClaimSuspect', [{ find: 'AND (g.allowance IS NULL OR g.allowance >= 1)', replace: 'AND (true OR g.allowance >= 1)' }]),
  ],
};
