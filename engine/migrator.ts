import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Db, Queryable } from './db.ts';
import { loadQueries } from './sql.ts';

const q = loadQueries(new URL('./migrator.sql', import.meta.url), [
  'LockMigrations',
  'CreateMigrationsTable',
  'MigrationsTablePresent',
  'AppliedMigrations',
  'RecordMigration',
  'UnlockMigrations',
] as const);

export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));

export interface Migration {
  name: string;
  sql: string;
}

/** The numbered, forward-only migrations in order: `NNNN_what.sql`. */
export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((name) => ({ name, sql: readFileSync(`${dir}/${name}`, 'utf8') }));
}

/**
 * Applies the migrations that have not run yet, each in its own transaction,
 * under a session advisory lock so two nodes starting at once take turns.
 * Returns the names it applied (empty when the schema was already current).
 */
export async function migrate(db: Db, migrations = readMigrations()): Promise<string[]> {
  const client = await db.pool.connect();
  const applied: string[] = [];
  try {
    await client.query(q.LockMigrations);
    try {
      await client.query(q.CreateMigrationsTable);
      const done = new Set((await client.query<{ name: string }>(q.AppliedMigrations)).rows.map((r) => r.name));
      for (const m of migrations) {
        if (done.has(m.name)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query(q.RecordMigration, [m.name]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
        }
        applied.push(m.name);
      }
    } finally {
      await client.query(q.UnlockMigrations);
    }
  } finally {
    client.release();
  }
  return applied;
}

/**
 * The migrations of this version that the database has not applied, in order:
 * all of them where stampede was never migrated. Reads only; creates nothing.
 */
export async function unappliedMigrations(db: Queryable, migrations = readMigrations()): Promise<string[]> {
  const present = (await db.query<{ present: boolean }>(q.MigrationsTablePresent)).rows[0].present;
  const done = new Set(present ? (await db.query<{ name: string }>(q.AppliedMigrations)).rows.map((r) => r.name) : []);
  return migrations.map((m) => m.name).filter((name) => !done.has(name));
}
