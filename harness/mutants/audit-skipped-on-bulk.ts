import { queryPatch, type Mutant } from './types.ts';

/**
 * The bulk redrive's audit CTE selects from the wrong relation (as if it
 * wrote one summary row per call and the summary got lost): the jobs move,
 * and no audit row says who moved them or why. Runs in the scenario runner.
 */
export const auditSkippedOnBulk: Mutant = {
  breaks: 'a bulk redrive moves the dead letters without writing their audit rows, so nobody can tell who redrove them or why',
  caughtBy: 'operator-audited',
  scenario: 'operator-chaos',
  runsIn: 'runner',
  changes: [
    queryPatch('engine/control/control.sql', 'RedriveMany', [
      // Only the bulk selection loses its rows: a single job's redrive (retry of a dead job, $6) is still audited.
      {
        find: "jsonb_build_object('from', 'dead', 'deadCode', code, 'deadReason', reason) FROM moved",
        replace: "jsonb_build_object('from', 'dead', 'deadCode', code, 'deadReason', reason) FROM moved WHERE $6::bigint IS NOT NULL",
      },
    ]),
  ],
};
