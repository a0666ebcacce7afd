import { CONTROL_COMMANDS } from '../../bin/control-commands.ts';
import type { Mutant } from './types.ts';

/** The command as shipped, taken before the swap (the table's entry is this mutant's while it runs). */
const keyWeight = CONTROL_COMMANDS['key-weight'].run;

/**
 * `stampede control key-weight <queue> <key> <weight>` loses its weight argument on the way to the engine (read
 * from a shifted position, as after an argument was inserted before it), so it writes `none`: the command exits 0
 * and names the key, but the key is back at the default weight 1, and a paying tenant gets an equal share.
 */
export const cliKeyWeightDropped: Mutant = {
  breaks: '`stampede control key-weight Q KEY W` drops W and removes the key\'s weight: exit 0, but the key claims at the default weight 1',
  caughtBy: 'weighted-share',
  scenario: 'weighted-tenants',
  runsIn: 'control',
  changes: [{ kind: 'table', table: 'control-commands', entry: 'key-weight', use: { args: 3, run: (db, args, values, actor) => keyWeight(db, [args[0], args[1], 'none'], values, actor) } }],
};
