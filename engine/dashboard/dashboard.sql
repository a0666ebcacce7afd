-- Queries of the dashboard (engine/dashboard/queries.ts). An operator opens
-- these pages during an incident, against a jobs table that may hold 300M
-- rows, nearly all of them done or archived. So, like the queue-state
-- sampler's queries (engine/metrics/queue-state.sql, which the queues page
-- reuses as they are), none of them may read the done rows or the history
-- at large: each rides a partial index that holds only live rows, a primary
-- key, or a small table, and every list has a LIMIT.
-- test/dashboard-queries.test.ts asserts from EXPLAIN that none does a Seq
-- Scan on stampede.jobs or on a partition of stampede.job_history.
--
-- Every query that lists jobs returns the same columns (JOB_COLUMNS below,
-- by hand: SQL has no macros), so one TypeScript mapper reads them all.
--   id, queue, priority, state, run_at, attempts, max_attempts, crash_count,
--   payload, idempotency_key, lease_owner, lease_expires_at, last_error,
--   errors, created_at, updated_at, finished_at, archived (bool)

-- name: JobById
-- The hot table by primary key, then the day partitions of the history by
-- theirs (id leads the key (id, finished_at), so it is one descent per
-- partition: a week of history is 8 descents, not a scan).
(SELECT j.id, j.queue, j.priority, j.state::text, j.run_at, j.attempts, j.max_attempts, j.crash_count,
        j.payload, j.idempotency_key, j.lease_owner, j.lease_expires_at, j.last_error,
        j.errors, j.created_at, j.updated_at, j.finished_at, false AS archived
   FROM stampede.jobs j WHERE j.id = $1)
UNION ALL
(SELECT h.id, h.queue, h.priority, h.state::text, h.run_at, h.attempts, h.max_attempts, h.crash_count,
        h.payload, h.idempotency_key, NULL::text, NULL::timestamptz, h.last_error,
        h.errors, h.created_at, h.updated_at, h.finished_at, true
   FROM stampede.job_history h WHERE h.id = $1)
LIMIT 1;

-- name: JobByIdempotencyKey
-- The hot table's unique key index. The history has no index on the key (a
-- dedup window ends when a job is archived, docs/scaling.md), so archived
-- jobs are found by id or by queue, not by key: searching the key there
-- would read every archived row.
SELECT j.id, j.queue, j.priority, j.state::text, j.run_at, j.attempts, j.max_attempts, j.crash_count,
       j.payload, j.idempotency_key, j.lease_owner, j.lease_expires_at, j.last_error,
       j.errors, j.created_at, j.updated_at, j.finished_at, false AS archived
  FROM stampede.jobs j
 WHERE j.idempotency_key = $1;

-- name: SearchClaimable
-- Pending and/or failed jobs ($2, a subset of {pending, failed}) of one
-- queue or all ($1 NULL), in jobs_due_idx order (queue, priority, run_at,
-- id). The index holds only claimable rows, so the cost is bounded by the
-- backlog, never by the done rows.
SELECT j.id, j.queue, j.priority, j.state::text, j.run_at, j.attempts, j.max_attempts, j.crash_count,
       j.payload, j.idempotency_key, j.lease_owner, j.lease_expires_at, j.last_error,
       j.errors, j.created_at, j.updated_at, j.finished_at, false AS archived
  FROM stampede.jobs j
 WHERE j.state IN ('pending', 'failed')
   AND j.state = ANY ($2::stampede.job_state[])
   AND ($1::text IS NULL OR j.queue = $1)
 ORDER BY j.queue, j.priority, j.run_at, j.id
 LIMIT $3;

-- name: SearchClaimed
-- jobs_lease_idx holds only claimed rows: at most workers x concurrency.
-- Soonest lease expiry first (the ones about to be rescued).
SELECT j.id, j.queue, j.priority, j.state::text, j.run_at, j.attempts, j.max_attempts, j.crash_count,
       j.payload, j.idempotency_key, j.lease_owner, j.lease_expires_at, j.last_error,
       j.errors, j.created_at, j.updated_at, j.finished_at, false AS archived
  FROM stampede.jobs j
 WHERE j.state = 'claimed'
   AND ($1::text IS NULL OR j.queue = $1)
 ORDER BY j.lease_expires_at
 LIMIT $2;

-- name: SearchDead
-- Dead jobs through their dead-letter rows (small by design; by queue on
-- dead_letters_queue_idx), then the job row by primary key. The jobs table
-- has no index on state = 'dead', and needs none.
SELECT j.id, j.queue, j.priority, j.state::text, j.run_at, j.attempts, j.max_attempts, j.crash_count,
       j.payload, j.idempotency_key, j.lease_owner, j.lease_expires_at, j.last_error,
       j.errors, j.created_at, j.updated_at, j.finished_at, false AS archived
  FROM (SELECT d.job_id, d.died_at FROM stampede.dead_letters d
         WHERE ($1::text IS NULL OR d.queue = $1)
         ORDER BY d.died_at DESC, d.job_id DESC
         LIMIT $2) dl
  JOIN stampede.jobs j ON j.id = dl.job_id
 ORDER BY dl.died_at DESC, dl.job_id DESC;

-- name: SearchCancelled
-- Cancelled jobs, found through the audit rows of their cancels (by queue on
-- control_audit_queue_idx), newest first, then the job by primary key. The
-- jobs table has no index on state = 'cancelled' and this needs none; the
-- audit holds one row per operator action, not one per job run.
SELECT j.id, j.queue, j.priority, j.state::text, j.run_at, j.attempts, j.max_attempts, j.crash_count,
       j.payload, j.idempotency_key, j.lease_owner, j.lease_expires_at, j.last_error,
       j.errors, j.created_at, j.updated_at, j.finished_at, false AS archived
  FROM (SELECT a.job_id, a.at FROM stampede.control_audit a
         WHERE a.verb = 'cancel' AND a.job_id IS NOT NULL AND ($1::text IS NULL OR a.queue = $1)
         ORDER BY a.at DESC
         LIMIT $2) c
  JOIN stampede.jobs j ON j.id = c.job_id AND j.state = 'cancelled'
 ORDER BY c.at DESC;

-- name: SearchRecentDone
-- Done jobs still in the hot table: the newest $3 completions on
-- jobs_done_finished_idx (0006), then filtered by queue. The scan cap is
-- what keeps this bounded: "done jobs of a rare queue" would otherwise walk
-- the index back through every completion the archiver has not moved yet
-- (all of them, if no archiver runs). Older ones: SearchArchived.
SELECT r.* FROM (
  SELECT j.id, j.queue, j.priority, j.state::text, j.run_at, j.attempts, j.max_attempts, j.crash_count,
         j.payload, j.idempotency_key, j.lease_owner, j.lease_expires_at, j.last_error,
         j.errors, j.created_at, j.updated_at, j.finished_at, false AS archived
    FROM stampede.jobs j
   WHERE j.state = 'done'
   ORDER BY j.finished_at DESC
   LIMIT $3
) r
 WHERE ($1::text IS NULL OR r.queue = $1)
 ORDER BY r.finished_at DESC
 LIMIT $2;

-- name: SearchArchived
-- Archived jobs of one queue, newest first: job_history_queue_idx (queue,
-- finished_at) in every day partition, merged. Needs a queue: across all
-- queues the history has no index ordered by finish time alone.
SELECT h.id, h.queue, h.priority, h.state::text, h.run_at, h.attempts, h.max_attempts, h.crash_count,
       h.payload, h.idempotency_key, NULL::text AS lease_owner, NULL::timestamptz AS lease_expires_at, h.last_error,
       h.errors, h.created_at, h.updated_at, h.finished_at, true AS archived
  FROM stampede.job_history h
 WHERE h.queue = $1
 ORDER BY h.finished_at DESC
 LIMIT $2;

-- name: DeadLetterOfJob
SELECT job_id, queue, attempts, code, reason, errors, died_at FROM stampede.dead_letters WHERE job_id = $1;

-- name: DeadLetterReasons
-- Dead letters grouped by queue, code and reason, the largest groups first:
-- what a bulk redrive would pick. dead_letters is one row per dead job and a
-- redrive removes it, so this reads a small table.
SELECT queue, code, reason, count(*)::int8 AS jobs, min(died_at) AS first_died_at, max(died_at) AS last_died_at
  FROM stampede.dead_letters
 GROUP BY queue, code, reason
 ORDER BY jobs DESC, queue, code, reason
 LIMIT $1;

-- name: RecentAudit
-- The newest operator actions across all queues: "what did my colleague just
-- do?". Newest by id, backwards on the primary key, so it reads $1 rows
-- however large the audit grew (a bulk redrive writes one row per job). The
-- ids are handed out in insertion order, which is time order up to
-- concurrent commits. By queue or by job: listAudit (engine/control).
SELECT id, at, actor, reason, verb, queue, job_id, detail
  FROM stampede.control_audit
 ORDER BY id DESC
 LIMIT $1;

-- name: LargestKeys
-- The fair queues' (per-key cap or sequential) $1 largest keys by due backlog: how many jobs
-- each has due, how long its oldest due job has waited, and how many of its jobs are in flight.
-- Reads the fair queues' keyed claimable rows from jobs_key_due_idx (migrations/0016_fair_keys.sql)
-- on a page load, under the page's statement_timeout; unkeyed rows and plain queues are never read.
SELECT s.queue, k.fairness_key AS key, k.due, k.oldest_wait_ms,
       (SELECT count(*)::int FROM stampede.jobs c WHERE c.state = 'claimed' AND c.queue = s.queue AND c.fairness_key = k.fairness_key) AS in_flight
  FROM stampede.queue_settings s
 CROSS JOIN LATERAL (
   SELECT j.fairness_key, count(*)::int AS due, date_part('epoch', now() - min(j.run_at)) * 1000 AS oldest_wait_ms
     FROM stampede.jobs j
    WHERE j.queue = s.queue AND j.fairness_key IS NOT NULL
      AND j.state IN ('pending', 'failed') AND j.crash_count = 0 AND j.run_at <= now()
    GROUP BY j.fairness_key
    ORDER BY count(*) DESC, j.fairness_key
    LIMIT $1
 ) k
 WHERE s.max_in_flight_per_key IS NOT NULL OR s.sequential
 ORDER BY s.queue, k.due DESC, k.fairness_key;
