// `npm run schema:snapshot`: migrates a fresh database and rewrites migrations/schema.snapshot.txt from its pg_catalog.
// Run it after adding a migration; test/schema-snapshot.test.ts compares the committed file with a fresh migration.
import { readFileSync, writeFileSync } from 'node:fs';
import { Db } from '../engine/db.ts';
import { migrate } from '../engine/migrator.ts';
import { createDatabase, dropDatabase } from '../harness/postgres/databases.ts';
import { provisionPostgres } from '../harness/postgres/provision.ts';
import { SCHEMA_SNAPSHOT_PATH, schemaSnapshot, snapshotDiff } from '../harness/postgres/schema-snapshot.ts';

const server = await provisionPostgres();
const name = `stampede_snapshot_${process.pid}`;
try {
  await dropDatabase(server.adminUrl, name);
  const db = new Db({ connectionString: await createDatabase(server.adminUrl, name), maxConnections: 1 });
  try {
    await migrate(db);
    const fresh = await schemaSnapshot(db);
    const before = (() => {
      try {
        return readFileSync(SCHEMA_SNAPSHOT_PATH, 'utf8');
      } catch {
        return '';
      }
    })();
    if (fresh === before) process.stdout.write('migrations/schema.snapshot.txt: up to date\n');
    else {
      writeFileSync(SCHEMA_SNAPSHOT_PATH, fresh);
      process.stdout.write(`migrations/schema.snapshot.txt: rewritten\n${snapshotDiff(before, fresh)}\n`);
    }
  } finally {
    await db.close();
    await dropDatabase(server.adminUrl, name);
  }
} finally {
  await server.stop();
}
