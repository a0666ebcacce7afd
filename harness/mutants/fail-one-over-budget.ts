import { queryPatch, type Mutant } from './types.ts';

/** An off-by-one in the failure path: a job dies only after one attempt more than its budget. */
export const failOneOverBudget: Mutant = {
  breaks: 'a failing job is given one attempt past its budget before it is dead-lettered',
  caughtBy: 'attempt-accounting',
  scenario: 'slow-worker',
  changes: [
    queryPatch('engine/worker/worker.sql', 'FailJob', [
      { find: "SET state = CASE WHEN j.attempts >= j.max_attempts THEN 'dead'", replace: "SET state = CASE WHEN j.attempts > j.max_attempts THEN 'dead'" },
      { find: 'finished_at = CASE WHEN j.attempts >= j.max_attempts THEN now() END', replace: 'finished_at = CASE WHEN j.attempts > j.max_attempts THEN now() END' },
    ]),
  ],
};
