import { randomBytes } from 'node:crypto';
import { afterAll, expect, inject, onTestFinished } from 'vitest';
import { Db } from '../../engine/db.ts';
import { createDatabase, dropDatabase } from '../../harness/postgres/databases.ts';

export interface TestDatabase {
  db: Db;
  url: string;
  name: string;
  adminUrl: string;
}

/**
 * A fresh database cloned from the migrated template, dropped after the file
 * (or, made inside a test, after that test). Every test file gets its own, so
 * files never see each other's rows.
 */
export async function freshDatabase(options: { maxConnections?: number } = {}): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const name = `stampede_t_${randomBytes(5).toString('hex')}`;
  const url = await createDatabase(adminUrl, name, inject('pgTemplate'));
  const db = new Db({ connectionString: url, maxConnections: options.maxConnections ?? 10 });
  const drop = async () => {
    await db.close();
    await dropDatabase(adminUrl, name);
  };
  // Vitest ignores an afterAll registered while a test runs, which left the
  // database behind on a DATABASE_URL server.
  if (expect.getState().currentTestName === undefined) afterAll(drop);
  else onTestFinished(drop);
  return { db, url, name, adminUrl };
}

/**
 * An empty database (not cloned from the migrated template: nothing of
 * stampede in it), made inside a test and dropped after it, with a Db of
 * `maxConnections` on it. For tests of the migrations themselves.
 */
export async function emptyDatabase(prefix: string, maxConnections = 1): Promise<{ db: Db; url: string }> {
  const adminUrl = inject('pgAdminUrl');
  const name = `${prefix}_${process.pid}`;
  await dropDatabase(adminUrl, name);
  const url = await createDatabase(adminUrl, name);
  const db = new Db({ connectionString: url, maxConnections });
  onTestFinished(async () => {
    await db.close();
    await dropDatabase(adminUrl, name);
  });
  return { db, url };
}
