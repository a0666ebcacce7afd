// stampede migrate: apply stampede's migrations to the server in DATABASE_URL.
// Exit codes: 0 applied (or nothing to apply), 1 the migration failed, 2 usage error.
import { Db } from '../engine/db.ts';
import { migrate } from '../engine/migrator.ts';
import { redactSecrets } from '../engine/redact.ts';
import { databaseUrl, exitOnHelp, parseFlags, UsageError } from './cli-args.ts';
import { HELP } from './help.ts';
import { parserOptions, usageText } from './usage.ts';

const USAGE = usageText('migrate', HELP.migrate);

let url: string;
try {
  exitOnHelp(process.argv.slice(2), USAGE);
  parseFlags(process.argv.slice(2), parserOptions(HELP.migrate.flags));
  url = databaseUrl();
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  process.stderr.write(`stampede migrate: ${err.message}\n${USAGE}\n`);
  process.exit(2);
}
const db = new Db({ connectionString: url, maxConnections: 1, applicationName: 'stampede:migrate' });
try {
  const applied = await migrate(db);
  process.stdout.write(
    applied.length
      ? `applied ${applied.length} migration(s) to ${redactSecrets(url)}:\n${applied.map((m) => `  ${m}\n`).join('')}`
      : `${redactSecrets(url)} is up to date; nothing applied\n`,
  );
} catch (err) {
  process.stderr.write(redactSecrets(`stampede migrate failed: ${(err as Error).message}\n`));
  process.exitCode = 1;
} finally {
  await db.close();
}
