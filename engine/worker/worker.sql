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
--    now() is the same for every row of the statement, so it drops out of
--    the order: the score is priority * agingMs - run_at (ms), one
--    subtraction per candidate and no clock read.
--  * `locked` takes row locks in score order with SKIP LOCKED: concurrent
--    workers skip each other's rows instead of queueing on them, and the
--    state/run_at predicate is re-checked under the lock.
--  * Attempts are charged here, at claim, so a handler that kills its process
--    still uses up an attempt.
--  * Suspects (crash_count > 0) are left to ClaimSuspect, which runs them alone.
--  * `gate` (stampede.claim_gate, migrations/0010_control.sql) drops paused
--    queues and says how many jobs each limited queue may still start
--    (max_in_flight, max_starts_per_second, across all workers); each
--    queue's LIMIT keeps a limited queue's best `allowance` candidates. For
--    unlimited queues it is one settings lookup and a shared lock: measured
--    cost in docs/operating.md. (A top-N per queue, not a row_number() over
--    every candidate: the window and its sorts were a tenth of the backends' time.)
--  * `keyed`: a fair queue (max_in_flight_per_key, migrations/0016_fair_keys.sql)
--    has its keyed jobs picked by stampede.fair_pick, a walk over its keys
--    that caps each key and shares the claim by weight, run after the gate
--    took the queue's exclusive lock; `candidates` then keeps only that
--    queue's unkeyed jobs (due order, among its first probes). A function,
--    not CTEs here: inlined, the walk's index probes entered this statement's
--    plan for every queue (test/claim-plan.test.ts holds the plain plan to
--    its three index reads); as a function a plain queue never runs it.
--  * RETURNING gives times as epoch ms (float8: within a microsecond at
--    today's epochs; a Date keeps milliseconds) and leaves out what the worker knows (state,
--    lease_owner): parsing four timestamptz strings per row was the largest
--    part of reading a claim in the worker process (claim.ts).
--  * date_part, not extract, here and in the score: extract computes in
--    numeric, which cost 1 ms of a 1,000-job claim's 16 in RETURNING and
--    0.8 ms more in the score over its candidates (docs/performance.md).
--  * `locked` and the final UPDATE find their rows by primary key
--    (`= ANY (ARRAY(...))`), not by joining the CTE before them, and
--    `locked` orders by the score computed again from the row. Joined to
--    `candidates`, `locked` was planned with the values for $2 * 2 rows,
--    and on a table of 20,000 due jobs that plan hashed them against a Seq
--    Scan of the whole table (14.2 -> 10.6 ms per 1,000-job claim by
--    primary key). The final UPDATE takes each row's lease by its queue,
--    not by joining `locked` again:
--    joined on `j.id = locked.id` alone, the planner hash-joined the 500
--    locked rows against a Seq Scan of the whole table (every done row too)
--    whenever the table was small enough to look cheap (98 -> 75 µs per
--    claimed job once the key came by primary key); joined on both, it ran a
--    nested loop whose every inner index scan sorted the whole id array
--    again, 500 times per claim (dropping the join: 17 % less database CPU
--    per job in a 20,000-job drain; docs/performance.md).
--  * Neither how many queues ($1) nor how many jobs ($2) a claim asks for is
--    in the planner's view: `candidates` starts from `gate` (one row per
--    queue, claim_gate's ROWS 4), not from unnest($1), and every LIMIT takes
--    $2 through a sub-SELECT. With them in view, a plan made with the values
--    (one queue, LIMIT 20) always cost less than the generic plan (ten
--    queues, a tenth of each lane), so Postgres never settled on the generic
--    plan and planned every claim again, 0.5 ms each: at 10 jobs a claim,
--    four tenths of the backend's CPU per claim and completion
--    (docs/performance.md). The plans are the same either way;
--    test/db-prepared.test.ts checks a connection moves to the generic one.
-- Measured alternative: locking inside the per-lane probes (LIMIT n FOR UPDATE
-- SKIP LOCKED per lane) holds up to 10x the rows it returns and starves
-- concurrent claimers; see docs/scaling.md for the figures.
WITH gate AS (
  SELECT g.queue, g.paused, g.allowance, g.per_key, g.key_cursor, g.sequential FROM stampede.claim_gate($1::text[], $2::int) g
), candidates AS (
  SELECT c.id, c.score
    FROM gate g
   CROSS JOIN LATERAL (
     SELECT l.id, p.priority * $5::float8 - date_part('epoch', l.run_at) * 1000 AS score
       FROM generate_series(0, 9) AS p(priority)
      CROSS JOIN LATERAL (
             SELECT j.id, j.run_at, j.fairness_key
               FROM stampede.jobs j
              WHERE j.queue = g.queue AND j.priority = p.priority
                AND j.state IN ('pending', 'failed') AND j.run_at <= now() AND j.crash_count = 0
              ORDER BY j.run_at, j.id
              LIMIT (SELECT $2 * 2)
           ) l
      WHERE g.per_key IS NULL OR l.fairness_key IS NULL
      ORDER BY score DESC
      LIMIT least(coalesce(g.allowance, (SELECT $2 * 4)), (SELECT $2 * 4))
   ) c
   WHERE NOT g.paused
   ORDER BY c.score DESC
   LIMIT (SELECT $2 * 4)
), keyed AS (
  SELECT f.id
    FROM gate g
   CROSS JOIN LATERAL stampede.fair_pick(g.queue, g.per_key, least(g.allowance, $2), g.key_cursor, g.sequential) AS f(id)
   WHERE g.per_key IS NOT NULL AND NOT g.paused AND g.allowance > 0
), locked AS (
  SELECT j.id
    FROM stampede.jobs j
   WHERE j.id = ANY (ARRAY(SELECT c.id FROM candidates c UNION ALL SELECT k.id FROM keyed k))
     AND j.state IN ('pending', 'failed') AND j.run_at <= now() AND j.crash_count = 0
   ORDER BY j.priority * $5::float8 - date_part('epoch', j.run_at) * 1000 DESC
   LIMIT (SELECT $2)
     FOR UPDATE OF j SKIP LOCKED
)
UPDATE stampede.jobs j
   SET state = 'claimed',
       updated_at = now(),
       attempts = j.attempts + 1,
       lease_owner = $3,
       lease_token = gen_random_uuid(),
       lease_expires_at = now() + make_interval(secs => q.lease_ms / 1000)
  FROM unnest($1::text[], $4::float8[]) AS q(queue, lease_ms)
 WHERE j.id = ANY (ARRAY(SELECT l.id FROM locked l)) AND j.queue = q.queue
RETURNING j.id, j.queue, j.priority, j.attempts, j.max_attempts, j.crash_count, j.payload, j.idempotency_key, j.fairness_key, j.trace_parent,
          j.lease_token, j.last_error, date_part('epoch', j.run_at) * 1000 AS run_at_ms,
          date_part('epoch', j.lease_expires_at) * 1000 AS lease_expires_at_ms,
          date_part('epoch', j.created_at) * 1000 AS created_at_ms, date_part('epoch', now()) * 1000 AS db_now_ms,
          date_part('epoch', clock_timestamp()) * 1000 AS db_taken_ms;

-- name: SuspectsWaiting
-- How long the oldest due suspect in these queues has waited, ms (null: none). Rides jobs_suspect_idx.
-- A paused queue's suspects wait for the resume, not for a drained worker.
SELECT extract(epoch FROM now() - min(j.run_at)) * 1000 AS oldest_wait_ms
  FROM stampede.jobs j
 WHERE j.queue = ANY($1::text[]) AND j.state IN ('pending', 'failed') AND j.run_at <= now() AND j.crash_count > 0
   AND NOT EXISTS (SELECT 1 FROM stampede.queue_settings s WHERE s.queue = j.queue AND s.paused);

-- name: ClaimSuspect
-- Claims one suspect, oldest first, for a worker that has nothing else in
-- flight and will claim nothing else until it is done. Paused queues and
-- limited queues without room are left out, as in ClaimJobs, and so is a
-- suspect whose key is at its queue's per-key cap, or, in a sequential
-- queue, is not its key's head.
WITH gate AS (
  SELECT g.queue, g.per_key, g.sequential FROM stampede.claim_gate($1::text[], 1) g WHERE NOT g.paused AND (g.allowance IS NULL OR g.allowance >= 1)
), locked AS (
  SELECT j.id, q.lease_ms
    FROM stampede.jobs j
    JOIN unnest($1::text[], $3::float8[]) AS q(queue, lease_ms) ON q.queue = j.queue
    JOIN gate g ON g.queue = j.queue
   WHERE j.state IN ('pending', 'failed') AND j.run_at <= now() AND j.crash_count > 0
     AND (g.per_key IS NULL OR j.fairness_key IS NULL OR stampede.key_in_flight(j.queue, j.fairness_key) < g.per_key)
     AND (NOT g.sequential OR j.fairness_key IS NULL OR j.id = stampede.key_head(j.queue, j.fairness_key))
   ORDER BY j.run_at, j.id
   LIMIT 1
     FOR UPDATE OF j SKIP LOCKED
)
UPDATE stampede.jobs j
   SET state = 'claimed',
       updated_at = now(),
       attempts = j.attempts + 1,
       lease_owner = $2,
       lease_token = gen_random_uuid(),
       lease_expires_at = now() + make_interval(secs => locked.lease_ms / 1000)
  FROM locked
 WHERE j.id = locked.id
RETURNING j.id, j.queue, j.priority, j.attempts, j.max_attempts, j.crash_count, j.payload, j.idempotency_key, j.fairness_key, j.trace_parent,
          j.lease_token, j.last_error, date_part('epoch', j.run_at) * 1000 AS run_at_ms,
          date_part('epoch', j.lease_expires_at) * 1000 AS lease_expires_at_ms,
          date_part('epoch', j.created_at) * 1000 AS created_at_ms, date_part('epoch', now()) * 1000 AS db_now_ms,
          date_part('epoch', clock_timestamp()) * 1000 AS db_taken_ms;

-- name: RenewLease
-- Heartbeat: extends the lease only while this worker still holds it.
UPDATE stampede.jobs
   SET lease_expires_at = now() + make_interval(secs => $3::float8 / 1000),
       updated_at = now()
 WHERE id = $1 AND lease_token = $2 AND state = 'claimed'
RETURNING lease_expires_at, now() AS db_now;

-- name: JobState
-- Only after a renewal found no lease: was the job cancelled by an operator?
SELECT state::text AS state FROM stampede.jobs WHERE id = $1;

-- name: CompleteJobs
-- Batched completion, fenced on each job's lease token: a worker that lost
-- its lease cannot overwrite what the new owner wrote. Returns the ids it
-- completed; a missing id means that lease was lost. Ids and tokens come as
-- two comma-separated lists: the driver quotes every element of an array
-- parameter one by one, which cost the worker more than the join does.
-- The rows come by primary key, whatever the statistics say:
--  * No `j.state = 'claimed'`: a lease token is set exactly while a job is
--    claimed (CHECK claimed_has_lease), so the token says it. Named, that
--    predicate let the planner reach the rows through the partial index of
--    claimed rows; where the statistics held next to no claimed rows (an
--    ANALYZE between bursts) the generic plan took that scan for one row and
--    compared every claimed row with every id: 1,000 ids took 140 ms, not 8.
--  * The lists sit in sub-SELECTs and under a LIMIT the planner cannot read
--    (NULL: no limit), so it plans for one pair, not for the list's length
--    (in the five executions per connection planned with the values) or ten
--    (in the generic plan). With more, it hashed the pairs against a Seq Scan
--    of any table small enough when the plan was made, and a generic plan is
--    kept while the table grows: a worker started on a fresh table
--    seq-scanned it at every completion until autovacuum's next ANALYZE.
--    Now only a table analyzed while it held a couple of hundred rows or
--    fewer gets a Seq Scan plan.
--  test/claim-plan.test.ts holds each case on jobs_pkey.
UPDATE stampede.jobs j
   SET state = 'done', finished_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
       updated_at = now()
  FROM (SELECT u.id, u.token
          FROM unnest((SELECT string_to_array($1::text, ',')::bigint[]), (SELECT string_to_array($2::text, ',')::uuid[])) AS u(id, token)
         LIMIT (SELECT NULL::bigint)) AS r
 WHERE j.id = r.id AND j.lease_token = r.token
RETURNING j.id;

-- name: FailJob
-- Records a failed attempt, fenced on the lease token. Below the attempt
-- budget the job waits in `failed` until run_at = now() + $4 ms (the jittered
-- backoff); at the budget it dies, and stampede.dead_letter writes its
-- dead-letter row in the same statement, with the whole error history, coded
-- `timeout` when the last attempt ran past its timeout ($5), else
-- `attempts_exhausted`.
WITH failed AS (
  UPDATE stampede.jobs j
     SET state = CASE WHEN j.attempts >= j.max_attempts THEN 'dead' ELSE 'failed' END::stampede.job_state,
         run_at = now() + make_interval(secs => $4::float8 / 1000),
         last_error = $3,
         errors = j.errors || jsonb_build_object('attempt', j.attempts, 'at', now(), 'kind', $5::text, 'error', $3::text),
         finished_at = CASE WHEN j.attempts >= j.max_attempts THEN now() END,
         lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
         updated_at = now()
   WHERE j.id = $1 AND j.state = 'claimed' AND j.lease_token = $2
  RETURNING j.id, j.attempts, j.state, j.run_at, j AS job
), dead AS (
  SELECT d.job_id, d.code, d.reason
    FROM failed f
   CROSS JOIN LATERAL stampede.dead_letter(f.job, CASE WHEN $5::text = 'timeout' THEN 'timeout' ELSE 'attempts_exhausted' END) d
   WHERE f.state = 'dead'
)
SELECT f.id, f.state, f.attempts, f.run_at, now() AS failed_at, d.code AS dead_code, d.reason AS dead_reason
  FROM failed f LEFT JOIN dead d ON d.job_id = f.id;

-- name: ReleaseJobs
-- Graceful shutdown: hands back claims this worker could not finish, without
-- charging the attempt, so another worker takes them at once.
UPDATE stampede.jobs j
   SET state = 'pending', attempts = greatest(j.attempts - 1, 0),
       lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, run_at = now(),
       updated_at = now()
  FROM unnest($1::bigint[], $2::uuid[]) AS r(id, token)
 WHERE j.id = r.id AND j.lease_token = r.token AND j.state = 'claimed'
RETURNING j.id;

-- name: DeferJob
-- Hands a claim back, uncharged, for a retry in $3 ms: its effect is held by
-- another holder's unfinished transaction (see RecordEffectKey). Fenced.
UPDATE stampede.jobs j
   SET state = 'pending', attempts = greatest(j.attempts - 1, 0), run_at = now() + make_interval(secs => $3::float8 / 1000),
       lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
       updated_at = now()
 WHERE j.id = $1 AND j.lease_token = $2 AND j.state = 'claimed'
RETURNING j.run_at;

-- name: RecordEffectKey
-- effectOnce: the dedup record, inside the effect's transaction. It first
-- takes the key's transaction-scoped advisory lock without waiting. Another
-- holder that has the lock is inside its own effect for this key and has not
-- committed (typically a worker frozen past its lease): `busy` comes back at
-- once, instead of this insert queueing on that holder's uncommitted key for
-- as long as it stays frozen, holding this job's claim meanwhile so that
-- any unrelated death of this worker would be charged to the job as a crash.
-- applied_at is written here rather than left to the column default, so the
-- pruner's retention reads the same now() that wrote it (docs/time.md).
WITH lock AS (
  SELECT pg_try_advisory_xact_lock(hashtext('stampede:effect'), hashtext($1)) AS got
), recorded AS (
  INSERT INTO stampede.effect_keys (key, job_id, applied_at)
  SELECT $1, $2, now() FROM lock WHERE lock.got
  ON CONFLICT (key) DO NOTHING
  RETURNING key
)
SELECT NOT lock.got AS busy, EXISTS (SELECT 1 FROM recorded) AS applied FROM lock;

-- name: CompleteJobInTx
-- effectOnce: the job's completion inside the effect's transaction, fenced.
UPDATE stampede.jobs
   SET state = 'done', finished_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
       updated_at = now()
 WHERE id = $1 AND lease_token = $2 AND state = 'claimed'
RETURNING id;

-- name: ListenForEnqueues
-- The channel the enqueue trigger notifies (migrations/0007_notify_throttle.sql):
-- an idle worker wakes on it instead of waiting for its poll.
LISTEN stampede_jobs;
