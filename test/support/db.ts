import { randomBytes } from 'node:crypto';
import { afterAll, inject } from 'vitest';
import { Db } from '../../engine/db.ts';
import { createDatabase, dropDatabase } from '../../harness/postgres/databases.ts';

export interface TestDatabase {
  db: Db;
  url: string;
  name: string;
  adminUrl: string;
}

/**
 * A fresh database cloned from the migrated template, dropped after the file.
 * Every test file gets its own, so files never see each other's rows.
 */
export async function freshDatabase(options: { maxConnections?: number } = {}): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const name = `stampede_t_${randomBytes(5).toString('hex')}`;
  const url = await createDatabase(adminUrl, name, inject('pgTemplate'));
  const db = new Db({ connectionString: url, maxConnections: options.maxConnections ?? 10 });
  afterAll(async () => {
    await db.close();
    await dropDatabase(adminUrl, name);
  });
  return { db, url, name, adminUrl };
}
