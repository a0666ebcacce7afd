-- name: InsertSchedule
-- $11 pins where materializing starts (tests, imports); NULL means the
-- database's now(), so a new schedule never back-fills its past.
INSERT INTO stampede.schedules (id, cron, timezone, queue, payload, priority, max_attempts, dst_policy, catch_up, enabled,
                                last_materialized_until)
VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10, coalesce($11::timestamptz, now()))
ON CONFLICT (id) DO NOTHING
RETURNING *;

-- name: ListSchedules
SELECT * FROM stampede.schedules ORDER BY id;

-- name: GetSchedule
SELECT * FROM stampede.schedules WHERE id = $1;

-- name: PauseSchedule
UPDATE stampede.schedules SET enabled = false, updated_at = now() WHERE id = $1 RETURNING *;

-- name: ResumeSchedule
-- A pause skips what fell due while paused: resuming a paused schedule moves
-- its progress up to now ($2, or the database's now()). Resuming one that is
-- already enabled leaves its progress alone, so it cannot discard a catch-up.
UPDATE stampede.schedules
   SET enabled = true,
       updated_at = now(),
       last_materialized_until = CASE WHEN enabled THEN last_materialized_until
                                      ELSE GREATEST(last_materialized_until, coalesce($2::timestamptz, now())) END
 WHERE id = $1
RETURNING *;

-- name: RemoveSchedule
-- Jobs already materialized (at most lookaheadMs ahead) stay and run.
DELETE FROM stampede.schedules WHERE id = $1 RETURNING *;
