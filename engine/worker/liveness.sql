-- name: StartWorker
-- A worker starting: a new incarnation of its id, before it claims anything.
-- started_at moves to now(), so the rescuer knows that a lease last written
-- before it belongs to an earlier incarnation under the same id (a process
-- restarted by a supervisor, a pod that kept its name), which is dead however
-- fresh the row's last_seen_at is.
INSERT INTO stampede.workers AS w (worker_id, started_at, last_seen_at, expires_at, ttl_ms)
VALUES ($1, now(), now(), now() + make_interval(secs => $2::float8 / 1000), $2)
ON CONFLICT (worker_id) DO UPDATE
   SET started_at = excluded.started_at, last_seen_at = excluded.last_seen_at,
       expires_at = excluded.expires_at, ttl_ms = excluded.ttl_ms, suspected_at = NULL;

-- name: TouchWorker
-- A live worker says so: its row, renewed until now() + $2 ms. Rows of
-- workers silent for an hour go (a killed worker never deletes its own).
WITH forgotten AS (
  DELETE FROM stampede.workers WHERE expires_at < now() - interval '1 hour' AND worker_id <> $1
)
INSERT INTO stampede.workers AS w (worker_id, started_at, last_seen_at, expires_at, ttl_ms)
VALUES ($1, now(), now(), now() + make_interval(secs => $2::float8 / 1000), $2)
ON CONFLICT (worker_id) DO UPDATE
   SET last_seen_at = excluded.last_seen_at, expires_at = excluded.expires_at, ttl_ms = excluded.ttl_ms,
       suspected_at = NULL;

-- name: ForgetWorker
-- A worker that stopped cleanly: from now on its leftover leases (if any) are a dead worker's.
DELETE FROM stampede.workers WHERE worker_id = $1;
