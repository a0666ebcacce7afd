import { queryPatch, type Mutant } from './types.ts';

/**
 * A refactor meant to keep cancel from fighting a worker over its lease:
 * CancelJob leaves claimed rows alone, yet cancelJob still answers and
 * audits the cancel (it does not read the row count). A running job the
 * operator cancelled runs on and completes. Runs where the verbs are issued:
 * the scenario runner (its operator faults and its dashboard).
 */
export const cancelIgnoresRunning: Mutant = {
  breaks: 'cancelling a running job answers "cancelled" but leaves the job claimed, so its handler runs on and the job completes',
  caughtBy: 'cancel-honoured',
  scenario: 'operator-chaos',
  runsIn: 'runner',
  changes: [queryPatch('engine/control/control.sql', 'CancelJob', [{ find: ' WHERE id = $1\nRETURNING id;', replace: " WHERE id = $1 AND state <> 'claimed'\nRETURNING id;" }])],
};
