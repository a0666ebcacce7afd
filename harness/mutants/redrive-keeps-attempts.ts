import { queryPatch, type Mutant } from './types.ts';

/**
 * The bulk redrive resets the crash count but keeps the attempts the job had
 * used: a redriven job starts again at attempt n+1 of its budget instead of 1,
 * so a job that died of its attempts dies again at its first failure.
 * Runs in the scenario runner, which issues the redrive.
 */
export const redriveKeepsAttempts: Mutant = {
  breaks: 'a bulk redrive keeps the attempts a job used, so it reruns without the fresh budget the docs promise',
  caughtBy: 'redrive-reruns',
  scenario: 'operator-chaos',
  runsIn: 'runner',
  changes: [queryPatch('engine/control/control.sql', 'RedriveMany', [{ find: "SET state = 'pending', attempts = 0, crash_count = 0,", replace: "SET state = 'pending', crash_count = 0," }])],
};
