-- name: ClaimJobs
-- Claims up to $2 due jobs from the queues in $1 for worker $3, each with the
-- lease of its queue ($4, ms, aligned with $1), in one atomic statement.
--
-- Shape, and why:
--  * `candidates` probes the partial index jobs_due_idx once per
--    (queue, priority): ten short index range scans, never a scan of the
--    table, however many finished rows it carries.
--  * Aging: a job's score is priority * $5 (agingMs) plus how long it has been
--    due, so a lower-priority job overtakes a higher one after waiting
--    (q - p) * agingMs longer. A pure ORDER BY priority starves low lanes.
--    $6 = false switches aging off (the no-aging mutant and the negative control).
--  * `locked` takes row locks in score order with SKIP LOCKED: concurrent
--    workers skip each other's rows instead of queueing on them, and the
--    state/run_at predicate is re-checked under the lock.
--  * Attempts are charged here, at claim, so a handler that kills its process
--    still uses up an attempt ($7 = false is the charge-on-failure mutant).
--  * Suspects (crash_count > 0) are left to ClaimSuspect, which runs them alone.
-- Measured alternative: locking inside the per-lane probes (LIMIT n FOR UPDATE
-- SKIP LOCKED per lane) holds up to 10x the rows it returns and starves
-- concurrent claimers; see docs/scaling.md for the figures.
WITH candidates AS (
  SELECT c.id, q.lease_ms,
         CASE WHEN $6::boolean
              THEN p.priority * $5::float8 + extract(epoch FROM now() - c.run_at) * 1000
              ELSE p.priority * 1e12 + extract(epoch FROM now() - c.run_at) * 1000
         END AS score
    FROM unnest($1::text[], $4::float8[]) AS q(queue, lease_ms)
   CROSS JOIN generate_series(0, 9) AS p(priority)
   CROSS JOIN LATERAL (
     SELECT j.id, j.run_at
       FROM stampede.jobs j
      WHERE j.queue = q.queue AND j.priority = p.priority
        AND j.state IN ('pending', 'failed') AND j.run_at <= now() AND j.crash_count = 0
      ORDER BY j.run_at, j.id
      LIMIT $2 * 2
   ) c
   ORDER BY score DESC
   LIMIT $2 * 4
), locked AS (
  SELECT j.id, c.score, c.lease_ms
    FROM candidates c
    JOIN stampede.jobs j ON j.id = c.id
   WHERE j.state IN ('pending', 'failed') AND j.run_at <= now() AND j.crash_count = 0
   ORDER BY c.score DESC
   LIMIT $2
     FOR UPDATE OF j SKIP LOCKED
)
UPDATE stampede.jobs j
   SET state = 'claimed',
       attempts = j.attempts + CASE WHEN $7::boolean THEN 1 ELSE 0 END,
       lease_owner = $3,
       lease_token = gen_random_uuid(),
       lease_expires_at = now() + make_interval(secs => locked.lease_ms / 1000)
  FROM locked
 WHERE j.id = locked.id
RETURNING j.id, j.queue, j.priority, j.state, j.run_at, j.attempts, j.max_attempts, j.crash_count, j.payload,
          j.idempotency_key, j.lease_owner, j.lease_token, j.lease_expires_at, j.last_error, j.created_at,
          now() AS db_now;

-- name: SuspectsWaiting
-- How long the oldest due suspect in these queues has waited, ms (null: none). Rides jobs_suspect_idx.
SELECT extract(epoch FROM now() - min(run_at)) * 1000 AS oldest_wait_ms
  FROM stampede.jobs
 WHERE queue = ANY($1::text[]) AND state IN ('pending', 'failed') AND run_at <= now() AND crash_count > 0;

-- name: ClaimSuspect
-- Claims one suspect, oldest first, for a worker that has nothing else in
-- flight and will claim nothing else until it is done.
WITH locked AS (
  SELECT j.id, q.lease_ms
    FROM stampede.jobs j
    JOIN unnest($1::text[], $3::float8[]) AS q(queue, lease_ms) ON q.queue = j.queue
   WHERE j.state IN ('pending', 'failed') AND j.run_at <= now() AND j.crash_count > 0
   ORDER BY j.run_at, j.id
   LIMIT 1
     FOR UPDATE OF j SKIP LOCKED
)
UPDATE stampede.jobs j
   SET state = 'claimed',
       attempts = j.attempts + CASE WHEN $4::boolean THEN 1 ELSE 0 END,
       lease_owner = $2,
       lease_token = gen_random_uuid(),
       lease_expires_at = now() + make_interval(secs => locked.lease_ms / 1000)
  FROM locked
 WHERE j.id = locked.id
RETURNING j.id, j.queue, j.priority, j.state, j.run_at, j.attempts, j.max_attempts, j.crash_count, j.payload,
          j.idempotency_key, j.lease_owner, j.lease_token, j.lease_expires_at, j.last_error, j.created_at,
          now() AS db_now;

-- name: SelectDueIdsUnlocked
-- The no-skip-locked mutant, step 1: pick due ids without any lock.
SELECT id FROM stampede.jobs
 WHERE queue = ANY($1::text[]) AND state IN ('pending', 'failed') AND run_at <= now()
 ORDER BY priority DESC, run_at, id
 LIMIT $2;

-- name: ClaimIdsUnchecked
-- The no-skip-locked mutant, step 2: claim those ids without re-checking
-- their state, so two workers that read the same ids both "win".
UPDATE stampede.jobs j
   SET state = 'claimed',
       attempts = j.attempts + 1,
       lease_owner = $2,
       lease_token = gen_random_uuid(),
       lease_expires_at = now() + make_interval(secs => $3::float8 / 1000)
 WHERE j.id = ANY($1::bigint[]) AND j.state IN ('pending', 'failed', 'claimed')
RETURNING j.id, j.queue, j.priority, j.state, j.run_at, j.attempts, j.max_attempts, j.crash_count, j.payload,
          j.idempotency_key, j.lease_owner, j.lease_token, j.lease_expires_at, j.last_error, j.created_at,
          now() AS db_now;

-- name: RenewLease
-- Heartbeat: extends the lease only while this worker still holds it.
UPDATE stampede.jobs
   SET lease_expires_at = now() + make_interval(secs => $3::float8 / 1000)
 WHERE id = $1 AND lease_token = $2 AND state = 'claimed'
RETURNING lease_expires_at;

-- name: CompleteJobs
-- Batched completion, fenced on each job's lease token: a worker that lost
-- its lease cannot overwrite what the new owner wrote. Returns the ids it
-- completed; a missing id means that lease was lost.
UPDATE stampede.jobs j
   SET state = 'done', finished_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
  FROM unnest($1::bigint[], $2::uuid[]) AS r(id, token)
 WHERE j.id = r.id AND j.lease_token = r.token AND j.state = 'claimed'
RETURNING j.id;

-- name: CompleteJobsUnfenced
-- The no-fencing mutant: completes a claimed job whoever holds it now.
UPDATE stampede.jobs j
   SET state = 'done', finished_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
 WHERE j.id = ANY($1::bigint[]) AND j.state = 'claimed'
RETURNING j.id;

-- name: FailJob
-- Records a failed attempt, fenced on the lease token. Below the attempt
-- budget the job waits in `failed` until run_at = now() + $4 ms (the jittered
-- backoff); at the budget it dies, and its dead-letter row is written in the
-- same statement, with the whole error history.
WITH failed AS (
  UPDATE stampede.jobs j
     SET attempts = j.attempts + CASE WHEN $7::boolean THEN 0 ELSE 1 END,
         state = CASE WHEN j.attempts + CASE WHEN $7::boolean THEN 0 ELSE 1 END >= j.max_attempts
                      THEN 'dead' ELSE 'failed' END::stampede.job_state,
         run_at = now() + make_interval(secs => $4::float8 / 1000),
         last_error = $3,
         errors = j.errors || jsonb_build_object('attempt', j.attempts, 'at', now(), 'kind', $5::text, 'error', $3::text),
         finished_at = CASE WHEN j.attempts + CASE WHEN $7::boolean THEN 0 ELSE 1 END >= j.max_attempts THEN now() END,
         lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
   WHERE j.id = $1 AND j.state = 'claimed' AND ($6::boolean OR j.lease_token = $2)
  RETURNING j.id, j.queue, j.payload, j.attempts, j.errors, j.state, j.run_at
), dead AS (
  INSERT INTO stampede.dead_letters (job_id, queue, payload, attempts, reason, errors)
  SELECT id, queue, payload, attempts, 'attempts exhausted: ' || $3, errors FROM failed WHERE state = 'dead'
  ON CONFLICT (job_id) DO NOTHING
)
SELECT id, state, attempts, run_at, now() AS failed_at FROM failed;

-- name: ReleaseJobs
-- Graceful shutdown: hands back claims this worker could not finish, without
-- charging the attempt, so another worker takes them at once.
UPDATE stampede.jobs j
   SET state = 'pending', attempts = greatest(j.attempts - CASE WHEN $3::boolean THEN 1 ELSE 0 END, 0),
       lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, run_at = now()
  FROM unnest($1::bigint[], $2::uuid[]) AS r(id, token)
 WHERE j.id = r.id AND j.lease_token = r.token AND j.state = 'claimed'
RETURNING j.id;

-- name: RecordEffectKey
-- effectOnce: the dedup record, inside the effect's transaction. applied_at
-- is written here rather than left to the column default, so the pruner's
-- retention reads the same now() that wrote it (docs/time.md).
INSERT INTO stampede.effect_keys (key, job_id, applied_at) VALUES ($1, $2, now())
ON CONFLICT (key) DO NOTHING
RETURNING key;

-- name: EffectKeyExists
-- Only the dedup-outside-tx mutant asks this outside the effect's transaction.
SELECT 1 FROM stampede.effect_keys WHERE key = $1;

-- name: CompleteJobInTx
-- effectOnce: the job's completion inside the effect's transaction, fenced.
UPDATE stampede.jobs
   SET state = 'done', finished_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
 WHERE id = $1 AND lease_token = $2 AND state = 'claimed'
RETURNING id;
