-- name: RescueExpiredLeases
-- Claims whose lease expired: the worker is presumed dead. Rides the partial
-- index jobs_lease_idx (claimed rows only) and takes a batch with SKIP LOCKED
-- so rescuers on every node share the work. Each expiry counts as a crash of
-- the job's worker; a job that crashed its worker $2 times, or is out of
-- attempts, goes to the dead-letter table in the same statement. The others
-- become claimable again at once: the lease expiry was the delay.
WITH expired AS (
  SELECT id FROM stampede.jobs
   WHERE state = 'claimed' AND lease_expires_at < now()
   ORDER BY lease_expires_at
   LIMIT $1
     FOR UPDATE SKIP LOCKED
), rescued AS (
  UPDATE stampede.jobs j
     SET crash_count = j.crash_count + 1,
         state = CASE
                   WHEN j.attempts >= j.max_attempts THEN 'dead'
                   WHEN j.crash_count + 1 >= $2 THEN 'dead'
                   ELSE 'failed'
                 END::stampede.job_state,
         run_at = now(),
         last_error = 'lease expired; worker presumed dead',
         errors = j.errors || jsonb_build_object('attempt', j.attempts, 'at', now(), 'kind', 'lease-expired',
                                                 'error', 'lease expired; worker ' || j.lease_owner || ' presumed dead'),
         finished_at = CASE WHEN j.attempts >= j.max_attempts OR j.crash_count + 1 >= $2 THEN now() END,
         lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
    FROM expired
   WHERE j.id = expired.id
  RETURNING j.id, j.queue, j.payload, j.attempts, j.crash_count, j.errors, j.state,
            CASE WHEN j.state = 'dead' THEN
              CASE WHEN j.attempts >= j.max_attempts THEN 'attempts exhausted: lease expired; worker presumed dead'
                   ELSE 'crashed its worker ' || j.crash_count || ' times' END
            END AS reason
), dead AS (
  INSERT INTO stampede.dead_letters (job_id, queue, payload, attempts, reason, errors)
  SELECT id, queue, payload, attempts, reason, errors FROM rescued WHERE state = 'dead'
  ON CONFLICT (job_id) DO NOTHING
)
SELECT id, queue, attempts, crash_count, state, reason FROM rescued;
