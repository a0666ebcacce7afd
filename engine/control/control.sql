-- Operator actions (engine/control/). Each verb runs in one transaction that
-- locks what it changes, decides, changes it and writes the audit row, so a
-- refusal changes nothing and every change says who and why.

-- name: LockJob
-- The job a verb acts on, locked until the verb commits: a worker's claim or
-- completion racing the verb waits, or is skipped by SKIP LOCKED.
SELECT id, queue, state::text AS state FROM stampede.jobs WHERE id = $1 FOR UPDATE;

-- name: CancelJob
-- pending | failed | claimed -> cancelled. A claimed job loses its lease here:
-- its worker's next heartbeat finds none and aborts the handler
-- (JobCancelledError on ctx.signal), and the lease fence refuses its result.
UPDATE stampede.jobs
   SET state = 'cancelled', finished_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
       updated_at = now()
 WHERE id = $1
RETURNING id;

-- name: RetryFailedJob
-- A failed job waiting for its backoff becomes due now; its attempt budget is unchanged.
UPDATE stampede.jobs SET run_at = now(), updated_at = now() WHERE id = $1 AND state = 'failed' RETURNING id;

-- name: DeadLetterJob
-- pending | failed | claimed -> dead by hand, with its dead-letter row
-- (stampede.dead_letter, code `operator`, message $2), in one statement. A
-- claimed job's worker learns it at its next heartbeat.
WITH dead AS (
  UPDATE stampede.jobs j
     SET state = 'dead', finished_at = now(), last_error = $2,
         lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
         updated_at = now()
   WHERE j.id = $1
  RETURNING j AS job
)
SELECT d.job_id FROM dead CROSS JOIN LATERAL stampede.dead_letter(dead.job, 'operator') d;

-- name: RedriveMany
-- The one redrive: every door (retryJob of a dead job, the bulk
-- redriveDeadLetters, the CLI, the dashboard) runs this statement, which
-- moves dead letters back to pending with a fresh budget and writes an audit
-- row per job, verb $7, in the same statement. Selects either job $6 alone,
-- or the dead letters of queue $1 with code $8 (NULL: any) whose message
-- contains $2 (NULL: any), oldest first, at most $3. The queue selection
-- rides dead_letters_queue_idx; SKIP LOCKED: a second operator redriving the
-- same set at once takes the rest instead of waiting. ($6 IS NULL is decided
-- once per execution, so each branch keeps its index in a generic plan.)
WITH one AS (
  SELECT d.job_id FROM stampede.dead_letters d WHERE d.job_id = $6::bigint FOR UPDATE
), many AS (
  SELECT d.job_id
    FROM stampede.dead_letters d
   WHERE $6::bigint IS NULL AND d.queue = $1
     AND ($8::text IS NULL OR d.code = $8::text)
     AND ($2::text IS NULL OR position($2::text IN d.reason) > 0)
   ORDER BY d.died_at, d.job_id
   LIMIT $3
     FOR UPDATE SKIP LOCKED
), picked AS (
  SELECT job_id FROM one UNION ALL SELECT job_id FROM many
), removed AS (
  DELETE FROM stampede.dead_letters d USING picked WHERE d.job_id = picked.job_id RETURNING d.job_id, d.queue, d.code, d.reason
), moved AS (
  UPDATE stampede.jobs j
     SET state = 'pending', attempts = 0, crash_count = 0, run_at = now(), finished_at = NULL, updated_at = now()
    FROM removed
   WHERE j.id = removed.job_id AND j.state = 'dead'
  RETURNING j.id, removed.queue, removed.code, removed.reason
), audit AS (
  INSERT INTO stampede.control_audit (actor, reason, verb, queue, job_id, detail)
  SELECT $4, $5, $7, queue, id, jsonb_build_object('from', 'dead', 'deadCode', code, 'deadReason', reason) FROM moved
)
SELECT id FROM moved ORDER BY id;

-- name: InsertAudit
INSERT INTO stampede.control_audit (actor, reason, verb, queue, job_id, detail)
VALUES ($1, $2, $3, $4, $5, $6::jsonb)
RETURNING id, at;

-- name: ListAudit
-- Newest first; by job (control_audit_job_idx) or by queue (control_audit_queue_idx) or all.
SELECT id, at, actor, reason, verb, queue, job_id, detail
  FROM stampede.control_audit
 WHERE ($1::bigint IS NULL OR job_id = $1) AND ($2::text IS NULL OR queue = $2)
 ORDER BY at DESC, id DESC
 LIMIT $3;

-- name: KnownQueue
-- Whether anything names the queue, each probe on an index or a small table
-- (never a scan of done rows): its settings, claimable rows (jobs_due_idx),
-- claimed rows (jobs_lease_idx, by queue), dead letters, schedules, and the
-- archived history (job_history_queue_idx, one probe per day partition). A
-- queue whose only jobs are done and not yet archived is not found: pass
-- allowNew.
SELECT EXISTS (SELECT 1 FROM stampede.queue_settings s WHERE s.queue = $1)
    OR EXISTS (SELECT 1 FROM stampede.jobs j WHERE j.queue = $1 AND j.state IN ('pending', 'failed'))
    OR EXISTS (SELECT 1 FROM stampede.jobs j WHERE j.queue = $1 AND j.state = 'claimed')
    OR EXISTS (SELECT 1 FROM stampede.dead_letters d WHERE d.queue = $1)
    OR EXISTS (SELECT 1 FROM stampede.schedules s WHERE s.queue = $1)
    OR EXISTS (SELECT 1 FROM stampede.job_history h WHERE h.queue = $1) AS known;

-- name: LockQueue
-- Orders this change against every claim of the queue (stampede.claim_gate):
-- it waits for claims under way and holds new ones until it commits.
SELECT pg_advisory_xact_lock(stampede.queue_lock_key($1));

-- name: PauseQueue
-- Returns nothing when the queue is already paused. paused_at is read after
-- LockQueue, so every claim that saw the queue running committed before it.
INSERT INTO stampede.queue_settings (queue, paused, paused_at, paused_by, paused_reason)
VALUES ($1, true, clock_timestamp(), $2, $3)
ON CONFLICT (queue) DO UPDATE
   SET paused = true, paused_at = EXCLUDED.paused_at, paused_by = EXCLUDED.paused_by, paused_reason = EXCLUDED.paused_reason
 WHERE NOT stampede.queue_settings.paused
RETURNING paused_at;

-- name: ResumeQueue
-- Returns nothing when the queue is not paused. resumed_at: the resume's
-- transaction start (claims that start after it may run).
UPDATE stampede.queue_settings
   SET paused = false, paused_at = NULL, paused_by = NULL, paused_reason = NULL
 WHERE queue = $1 AND paused
RETURNING now() AS resumed_at;

-- name: SetQueueLimits
-- Replaces both limits (NULL removes one) and refills the start bucket; the
-- per-key cap ($4) only when $5 says it was given (NULL removes it), and
-- `sequential` only when $6 is not NULL.
INSERT INTO stampede.queue_settings (queue, max_in_flight, max_starts_per_second, max_in_flight_per_key, sequential)
VALUES ($1, $2, $3, $4, coalesce($6::boolean, false))
ON CONFLICT (queue) DO UPDATE
   SET max_in_flight = EXCLUDED.max_in_flight, max_starts_per_second = EXCLUDED.max_starts_per_second,
       max_in_flight_per_key = CASE WHEN $5::boolean THEN EXCLUDED.max_in_flight_per_key ELSE stampede.queue_settings.max_in_flight_per_key END,
       sequential = coalesce($6::boolean, stampede.queue_settings.sequential),
       start_tokens = NULL, start_tokens_at = NULL
RETURNING queue;

-- name: SetKeyWeight
-- A key's weight in its queue's fair share; NULL ($3) removes it (weight 1).
WITH removed AS (
  DELETE FROM stampede.key_weights WHERE queue = $1 AND key = $2 AND $3::int IS NULL
)
INSERT INTO stampede.key_weights (queue, key, weight)
SELECT $1, $2, $3 WHERE $3::int IS NOT NULL
ON CONFLICT (queue, key) DO UPDATE SET weight = EXCLUDED.weight;

-- name: GetKeyWeight
SELECT weight FROM stampede.key_weights WHERE queue = $1 AND key = $2;

-- name: ListKeyWeights
-- A queue's weighed keys, heaviest first: the primary key's (queue, key) range.
SELECT key, weight FROM stampede.key_weights WHERE queue = $1 ORDER BY weight DESC, key;

-- name: GetQueueControl
SELECT queue, paused, paused_at, paused_by, paused_reason, max_in_flight, max_starts_per_second, max_in_flight_per_key, sequential, max_attempts
  FROM stampede.queue_settings WHERE queue = $1;

-- name: ListQueueControls
-- Every queue with a setting (a small table: one row per configured queue).
SELECT queue, paused, paused_at, paused_by, paused_reason, max_in_flight, max_starts_per_second, max_in_flight_per_key, sequential, max_attempts
  FROM stampede.queue_settings ORDER BY queue;
