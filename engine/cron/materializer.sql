-- name: DbNow
-- The database clock, against which each node measures its skew. Due-ness of
-- the jobs is decided by this clock too (in the worker's claim), which is why
-- a node running ahead only creates rows early, never runs them early.
SELECT now() AS now;

-- name: EnabledSchedules
SELECT * FROM stampede.schedules WHERE enabled ORDER BY id;

-- name: AdvanceProgress
-- Progress only moves forward (GREATEST), so a node that is behind, or that
-- read a stale mark, can never move it back and cause a recompute that the
-- catch-up policy would treat differently. Runs in the same transaction as
-- the INSERT of the occurrences it covers: both commit or neither does.
UPDATE stampede.schedules s
   SET last_materialized_until = GREATEST(s.last_materialized_until, u.until)
  FROM unnest($1::text[], $2::timestamptz[]) AS u(id, until)
 WHERE s.id = u.id AND u.until > s.last_materialized_until;
