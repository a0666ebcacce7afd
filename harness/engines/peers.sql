-- name: CreatePeerTables
-- A peer engine deletes (graphile-worker) or keeps (pg-boss) a finished job's
-- row as it likes; what the harness knows for itself is which handler runs
-- returned successfully. No unique key: a job completed twice shows twice.
CREATE TABLE IF NOT EXISTS harness.completions (
  job_id    bigint NOT NULL,
  attempt   int NOT NULL,
  worker_id text NOT NULL,
  at        timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- name: RecordCompletion
INSERT INTO harness.completions (job_id, attempt, worker_id) VALUES ($1, $2, $3);

-- name: CompletedJobs
SELECT DISTINCT job_id FROM harness.completions;

-- name: GraphileAddJob
-- graphile-worker's documented SQL API: one job per call, its key the harness's.
SELECT id, floor(extract(epoch FROM run_at) * 1000)::float8 AS run_at_ms
  FROM graphile_worker.add_job($1::text, $2::json, run_at => coalesce($3::timestamptz, now() + make_interval(secs => $4::float8 / 1000)),
                               max_attempts => $5::int, job_key => $6::text, priority => $7::int);

-- name: GraphileAddJobs
-- A batch in one statement through graphile-worker's batch function, as its own addJobs (WorkerUtils) calls it:
-- add_jobs over the specs as json (identifier, payload, run_at, max_attempts, job_key, priority). add_job per
-- row took 7 s for a 3,000-job herd on the loaded 2-core machine, its jobs 7 s old when they committed.
SELECT j.key, floor(extract(epoch FROM j.run_at) * 1000)::float8 AS run_at_ms
  FROM graphile_worker.add_jobs(array(SELECT json_populate_recordset(null::graphile_worker.job_spec, $1::json)), false) AS j;

-- name: GraphileJobIdsFrom
-- A scenario's graphile-worker setup: the next job id is $1, as on a deployment that has run that many jobs.
-- The jobs table is _private_jobs since 0.16 (a view `jobs` over it); its id is a bigserial.
SELECT setval(pg_get_serial_sequence('graphile_worker._private_jobs', 'id'), $1::bigint, false);

-- name: GraphileJobs
-- The jobs table (a view over _private_jobs since 0.16; the table itself before): finished jobs are deleted.
SELECT key, task_identifier AS queue, priority, attempts, max_attempts, locked_at IS NOT NULL AS locked,
       floor(extract(epoch FROM run_at) * 1000)::float8 AS run_at_ms, run_at > now() AS not_due_yet
  FROM graphile_worker.jobs;

-- name: GraphileUnfinished
-- Not finished: still in the table and not permanently failed (attempts left, or locked).
SELECT count(*)::int AS n, now() AS db_now FROM graphile_worker.jobs WHERE attempts < max_attempts OR locked_at IS NOT NULL;

-- name: GraphileSample
SELECT task_identifier AS queue, count(*)::int AS due,
       coalesce(extract(epoch FROM now() - min(run_at)) * 1000, 0)::float8 AS oldest_ms
  FROM graphile_worker.jobs
 WHERE locked_at IS NULL AND attempts < max_attempts AND run_at <= now()
 GROUP BY task_identifier;

-- name: PgBossJobs
-- Every job row of the harness's queues (their dead-letter queues excluded: a dead letter is a copy).
SELECT data->>'key' AS key, name AS queue, priority, state::text AS state, retry_count, retry_limit,
       floor(extract(epoch FROM start_after) * 1000)::float8 AS run_at_ms, start_after > now() AS not_due_yet
  FROM pgboss.job WHERE name = ANY($1::text[]);

-- name: PgBossDeadLetters
SELECT data->>'key' AS key, name AS queue FROM pgboss.job WHERE name = ANY($1::text[]);

-- name: PgBossUnfinished
SELECT count(*)::int AS n, now() AS db_now FROM pgboss.job WHERE name = ANY($1::text[]) AND state < 'completed';

-- name: PgBossSample
SELECT name AS queue, count(*)::int AS due, coalesce(extract(epoch FROM now() - min(start_after)) * 1000, 0)::float8 AS oldest_ms
  FROM pgboss.job
 WHERE name = ANY($1::text[]) AND state IN ('created', 'retry') AND start_after <= now()
 GROUP BY name;

-- name: PgBossRunAt
SELECT id::text, floor(extract(epoch FROM start_after) * 1000)::float8 AS ms FROM pgboss.job WHERE id = ANY($1::uuid[]);

-- name: PgBossQueues
-- The harness's queues: every pg-boss queue but the dead-letter ones (named <queue>__dead).
SELECT name FROM pgboss.queue WHERE name NOT LIKE '%\_\_dead';
