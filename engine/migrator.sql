-- name: LockMigrations
-- One key for "stampede is migrating": a second node blocks here until the first is done.
SELECT pg_advisory_lock(hashtext('stampede:migrate'));

-- name: CreateMigrationsTable
CREATE SCHEMA IF NOT EXISTS stampede;
CREATE TABLE IF NOT EXISTS stampede.migrations (
  name       text PRIMARY KEY,
  applied_at timestamptz NOT NULL DEFAULT now()
);

-- name: MigrationsTablePresent
-- Whether stampede was ever migrated here, without creating anything.
SELECT to_regclass('stampede.migrations') IS NOT NULL AS present;

-- name: AppliedMigrations
SELECT name FROM stampede.migrations ORDER BY name;

-- name: RecordMigration
INSERT INTO stampede.migrations (name) VALUES ($1);

-- name: UnlockMigrations
SELECT pg_advisory_unlock(hashtext('stampede:migrate'));
