-- name: RescueExpiredLeases
-- Claims whose lease expired: the worker is presumed dead. Rides the partial
-- index jobs_lease_idx (claimed rows only) and takes a batch with SKIP LOCKED
-- so rescuers on every node share the work. Each expiry counts as a crash of
-- the job's worker; a job that crashed its worker $2 times ($3 = true
-- switches this off: the no-crash-detection mutant), or is out of attempts,
-- goes to the dead-letter table in the same statement. The others become
-- claimable again at once: the lease expiry was the delay.
-- $4 = false is the charge-on-failure mutant: a crash is not counted at all.
WITH expired AS (
  SELECT id, lease_owner, lease_expires_at FROM stampede.jobs
   WHERE state = 'claimed' AND lease_expires_at < now()
   ORDER BY lease_expires_at
   LIMIT $1
     FOR UPDATE SKIP LOCKED
), rescued AS (
  UPDATE stampede.jobs j
     SET crash_count = j.crash_count + CASE WHEN $4::boolean THEN 1 ELSE 0 END,
         state = CASE
                   WHEN $4::boolean AND j.attempts >= j.max_attempts THEN 'dead'
                   WHEN $4::boolean AND NOT $3::boolean AND j.crash_count + 1 >= $2 THEN 'dead'
                   ELSE 'failed'
                 END::stampede.job_state,
         run_at = now(),
         last_error = 'lease expired; worker presumed dead',
         errors = j.errors || jsonb_build_object('attempt', j.attempts, 'at', now(), 'kind', 'lease-expired',
                                                 'error', 'lease expired; worker ' || j.lease_owner || ' presumed dead'),
         finished_at = CASE WHEN $4::boolean AND (j.attempts >= j.max_attempts
                                                  OR (NOT $3::boolean AND j.crash_count + 1 >= $2)) THEN now() END,
         lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
    FROM expired
   WHERE j.id = expired.id
  RETURNING j.id, j.queue, j.payload, j.attempts, j.crash_count, j.errors, j.state,
            expired.lease_owner AS owner, expired.lease_expires_at AS expired_at,
            CASE WHEN j.state = 'dead' THEN
              CASE WHEN j.attempts >= j.max_attempts THEN 'attempts exhausted: lease expired; worker presumed dead'
                   ELSE 'crashed its worker ' || j.crash_count || ' times' END
            END AS reason
), dead AS (
  INSERT INTO stampede.dead_letters (job_id, queue, payload, attempts, reason, errors)
  SELECT id, queue, payload, attempts, reason, errors FROM rescued WHERE state = 'dead'
  ON CONFLICT (job_id) DO NOTHING
)
-- owner, expired_at and db_now say whose lease it was, when it ran out and when it was taken back.
SELECT id, queue, attempts, crash_count, state, reason, owner, expired_at, now() AS db_now FROM rescued;
