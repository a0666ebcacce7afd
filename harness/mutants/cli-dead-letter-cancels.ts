import { CONTROL_COMMANDS } from '../../bin/control-commands.ts';
import type { Mutant } from './types.ts';

/**
 * `stampede control dead-letter` runs the cancel verb, as when a command table is edited by copying its neighbour's
 * entry: the job is stopped, so nothing looks wrong from the shell, but it is cancelled rather than dead-lettered, so
 * it is not in the dead letters to be inspected or redriven, and the dashboard and the API still do it right.
 */
export const cliDeadLetterCancels: Mutant = {
  breaks: '`stampede control dead-letter <id>` cancels the job instead: exit 0, but the job is cancelled, not in the dead letters',
  caughtBy: 'cli-verbs',
  scenario: 'operator-chaos',
  runsIn: 'control',
  changes: [{ kind: 'table', table: 'control-commands', entry: 'dead-letter', use: { args: 1, run: CONTROL_COMMANDS.cancel.run } }],
};
