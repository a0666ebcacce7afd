import { queryPatch, type Mutant } from './types.ts';

/**
 * Strict priority: a priority step outweighs any wait, in both places the claim scores a job (the candidates and the
 * lock order). ($5, agingMs, stays referenced so the statement still prepares.)
 */
export const noAging: Mutant = {
  breaks: 'claims order by priority alone, so a saturated high lane starves the low lane',
  caughtBy: 'fairness',
  scenario: 'priority-starvation',
  changes: [
    queryPatch('engine/worker/worker.sql', 'ClaimJobs', [
      { find: 'p.priority * $5::float8 - date_part(', replace: 'p.priority * 1e12 + 0 * $5::float8 - date_part(' },
      { find: 'j.priority * $5::float8 - date_part(', replace: 'j.priority * 1e12 + 0 * $5::float8 - date_part(' },
    ]),
  ],
};
