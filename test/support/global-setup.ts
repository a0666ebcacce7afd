import { execFileSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { Db } from '../../engine/db.ts';
import { migrate } from '../../engine/migrator.ts';
import { createDatabase, dropDatabase } from '../../harness/postgres/databases.ts';
import { provisionPostgres, type PostgresServer } from '../../harness/postgres/provision.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
    pgKind: string;
  }
}

let server: PostgresServer | undefined;
let template = '';

/** One real server for the whole run; a migrated template that each test file clones. */
export async function setup(project: TestProject) {
  // Tests that start processes run the compiled package (dist/), as users do: build it
  // first (incremental, seconds when nothing changed), so a single `npx vitest run` sees edits.
  execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  server = await provisionPostgres();
  template = `stampede_tpl_${process.pid}`;
  await dropDatabase(server.adminUrl, template);
  const url = await createDatabase(server.adminUrl, template);
  const db = new Db({ connectionString: url, maxConnections: 1 });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  project.provide('pgAdminUrl', server.adminUrl);
  project.provide('pgTemplate', template);
  project.provide('pgKind', server.kind);
}

export async function teardown() {
  if (server?.kind !== 'embedded' && template) await dropDatabase(server!.adminUrl, template).catch(() => {});
  await server?.stop();
}
