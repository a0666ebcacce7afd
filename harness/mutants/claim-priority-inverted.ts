import { queryPatch, type Mutant } from './types.ts';

/**
 * The claim's score with the priority's sign flipped, in both places it is computed (the candidates and the lock
 * order): priority 0 is served first and aging runs the wrong way. A refactor that "fixed" the sort direction of
 * one term would do this; strict fairness of the low lane still holds, so only the order itself tells.
 */
export const claimPriorityInverted: Mutant = {
  breaks: 'claims take the lowest priority first (the score subtracts priority instead of adding it), so urgent jobs wait behind the rest',
  caughtBy: 'priority-order',
  scenario: 'priority-starvation',
  changes: [
    queryPatch('engine/worker/worker.sql', 'ClaimJobs', [
      { find: 'p.priority * $5::float8 - date_part(', replace: '- p.priority * $5::float8 - date_part(' },
      { find: 'j.priority * $5::float8 - date_part(', replace: '- j.priority * $5::float8 - date_part(' },
    ]),
  ],
};
