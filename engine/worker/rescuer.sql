-- name: RescueExpiredLeases
-- Claims whose lease expired. Rides the partial index jobs_lease_idx
-- (claimed rows only) and takes a batch with SKIP LOCKED so rescuers on every
-- node share the work. Whether an expiry is a crash of the job depends on the
-- lease holder's own liveness (stampede.workers, renewed by every live
-- worker), not on the lease alone:
--  * holder dead (no row: it stopped, or never said it was alive; a row of a
--    later incarnation under the same id, started after the lease was last
--    written, so the process that held it was restarted; or silent
--    for two liveness periods (2/3 of its ttl) since a rescuer first found
--    it past its expiry (a live worker renews once a period), while
--    the database has been up for $3 ms, long enough for a live worker to
--    reconnect after a Postgres restart): a crash. Silence is counted from
--    the suspicion, not from expires_at, because a step of the database
--    clock (NTP correcting a drifted host, a VM resumed) expires every row
--    at once; a live worker clears its suspicion at its next renewal. A job
--    that crashed its worker $2 times, or is out of attempts, goes to the
--    dead-letter table in the same statement (stampede.dead_letter).
--  * holder seen alive after the lease expired: a live worker that lost the
--    lease (a stall with heartbeats off, a result write that could not reach
--    the database in time). The job is taken back, and no crash is counted.
--  * neither yet: undecided, left for a later pass, at most the holder's
--    liveness ttl (or $3 ms after a restart) from now.
-- The others become claimable again at once: the lease expiry was the delay.
WITH suspected AS (
  -- Reads the rows as this statement found them; `expired` below sees the same
  -- snapshot, so a holder suspected now is judged dead at a later pass at the earliest.
  UPDATE stampede.workers w SET suspected_at = now()
   WHERE w.suspected_at IS NULL AND w.expires_at < now()
), expired AS (
  SELECT j.id, holder.dead, j.lease_owner, j.lease_expires_at
    FROM stampede.jobs j
    LEFT JOIN stampede.workers w ON w.worker_id = j.lease_owner
   CROSS JOIN LATERAL (
     SELECT w.worker_id IS NULL
            OR w.started_at > j.updated_at
            -- coalesce: a holder never suspected (suspected_at null) is not dead by silence.
            OR coalesce(w.suspected_at + make_interval(secs => w.ttl_ms / 1000.0 * 2 / 3) < now() AND w.last_seen_at < w.suspected_at
                        AND pg_postmaster_start_time() + make_interval(secs => $3::float8 / 1000) < now(), false) AS dead
   ) holder
   WHERE j.state = 'claimed' AND j.lease_expires_at < now()
     AND (holder.dead OR w.last_seen_at >= j.lease_expires_at)
   ORDER BY j.lease_expires_at
   LIMIT $1
     FOR UPDATE OF j SKIP LOCKED
), rescued AS (
  UPDATE stampede.jobs j
     SET crash_count = j.crash_count + CASE WHEN expired.dead THEN 1 ELSE 0 END,
         state = CASE
                   WHEN j.attempts >= j.max_attempts THEN 'dead'
                   WHEN expired.dead AND j.crash_count + 1 >= $2 THEN 'dead'
                   ELSE 'failed'
                 END::stampede.job_state,
         run_at = now(),
         last_error = CASE WHEN expired.dead THEN 'lease expired; worker presumed dead'
                           ELSE 'lease expired while its worker was alive' END,
         errors = j.errors || jsonb_build_object('attempt', j.attempts, 'at', now(),
                                                 'kind', CASE WHEN expired.dead THEN 'lease-expired' ELSE 'lease-lost' END,
                                                 'error', CASE WHEN expired.dead THEN 'lease expired; worker ' || j.lease_owner || ' presumed dead'
                                                               ELSE 'lease expired while worker ' || j.lease_owner || ' was alive' END),
         finished_at = CASE WHEN j.attempts >= j.max_attempts OR (expired.dead AND j.crash_count + 1 >= $2) THEN now() END,
         lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
         updated_at = now()
    FROM expired
   WHERE j.id = expired.id
  RETURNING j.id, j.queue, j.attempts, j.crash_count, j.state, expired.dead AS crashed,
            expired.lease_owner AS owner, expired.lease_expires_at AS expired_at, j AS job,
            -- Why a job that dies here died: its budget ran out first, else its crashes convicted it.
            CASE WHEN j.attempts >= j.max_attempts THEN 'lease_expired' ELSE 'crash_loop' END AS dead_code
), dead AS (
  SELECT d.job_id, d.code, d.reason
    FROM rescued r
   CROSS JOIN LATERAL stampede.dead_letter(r.job, r.dead_code) d
   WHERE r.state = 'dead'
)
-- owner, expired_at and db_now say whose lease it was, when it ran out and when it was taken back.
SELECT r.id, r.queue, r.attempts, r.crash_count, r.state, r.crashed, d.code AS dead_code, d.reason, r.owner, r.expired_at, now() AS db_now
  FROM rescued r LEFT JOIN dead d ON d.job_id = r.id;
