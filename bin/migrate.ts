// npm run migrate: apply stampede's migrations to the server in DATABASE_URL.
import { Db } from '../engine/db.ts';
import { migrate } from '../engine/migrator.ts';
import { redactSecrets } from '../engine/redact.ts';

const url = process.env.DATABASE_URL;
if (!url) {
  process.stderr.write('npm run migrate: DATABASE_URL is not set; expected postgres://user:pass@host:port/db\n');
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
  process.stderr.write(redactSecrets(`npm run migrate failed: ${(err as Error).message}\n`));
  process.exitCode = 1;
} finally {
  await db.close();
}
