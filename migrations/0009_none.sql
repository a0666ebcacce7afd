-- 0009: nothing. No migration 0009 was ever released: two changes in
-- parallel took 0008 and 0010, and the number between them stayed empty.
-- This file closes the gap so the numbers run without one (issue 40). It
-- changes nothing, so applying it is the same on every database: a fresh
-- one runs it between 0008 and 0010; one migrated before it existed (0010
-- and later already applied) runs it at its next migrate, as the one
-- migration it lacks, and nothing else reruns (the migrator tracks applied
-- migrations by file name, and no file was renamed). docs/migrations.md.
SELECT 1;
