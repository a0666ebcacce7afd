// Operator actions on the database named by DATABASE_URL (engine/control).
// Every change needs --by (who) and --reason (why), recorded in
// stampede.control_audit. Reference: docs/operating.md.
//
// Exit status: 0 done, 2 refused (a bad flag, or an action that makes no
// sense for what it found: the message says which and why), 1 anything else.
import { Db } from '../engine/db.ts';
import { ControlRefusedError } from '../engine/control/index.ts';
import { ValidationError } from '../engine/errors.ts';
import { redactSecrets } from '../engine/redact.ts';
import { unknownQueueReason, UnknownQueueError } from '../engine/control/errors.ts';
import { databaseUrl, parseFlags, refuseExtraArguments, UsageError } from './cli-args.ts';
import { CONTROL_COMMANDS, type ControlCommandDef } from './control-commands.ts';
import { HELP } from './help.ts';
import { HELP_FLAG, parserOptions, usageText } from './usage.ts';

const USAGE = usageText('control', HELP.control);
const FLAGS = parserOptions({ ...HELP.control.flags, ...HELP_FLAG });

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, FLAGS, true);
  const [command, ...args] = positionals;
  if (values.help || !command) {
    process.stdout.write(USAGE + '\n');
    return values.help ? 0 : 2;
  }
  // Read from the table when it runs: one declaration of the commands, their arguments and what each does.
  // Own entries only: `constructor` or `toString` is no command.
  const def = Object.hasOwn(CONTROL_COMMANDS, command) ? (CONTROL_COMMANDS as Record<string, ControlCommandDef>)[command] : undefined;
  if (!def) throw new UsageError(`unknown command "${command}"; expected one of ${Object.keys(CONTROL_COMMANDS).join(', ')}`);
  refuseExtraArguments(command, args, { [command]: def.args });
  const actor = () => {
    if (!values.by || !values.reason) throw new UsageError(`${command}: --by WHO and --reason WHY are required (they go to the audit)`);
    return { by: values.by as string, reason: values.reason as string };
  };
  const url = databaseUrl();
  const db = new Db({ connectionString: url, maxConnections: 1, applicationName: 'stampede:control' });
  try {
    process.stdout.write(await def.run(db, args, values, actor));
    return 0;
  } finally {
    await db.close();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  const refused = err instanceof UsageError || err instanceof ValidationError || err instanceof ControlRefusedError;
  // The engine's error names its API option; an operator at the command line passes the flag.
  const message = err instanceof UnknownQueueError ? `${err.verb} ${err.target}: ${unknownQueueReason('--new')}` : (err as Error).message;
  process.stderr.write(redactSecrets(`stampede control: ${message}\n`) + (err instanceof UsageError ? `${USAGE}\n` : ''));
  process.exitCode = refused ? 2 : 1;
}
