-- Named queries of the bench. Nothing here runs inside stampede; these are
-- the bench's own measurements and the counts it uses to know a drain is over.

-- name: RemainingStampede
-- Jobs whose completion has not committed yet.
SELECT count(*)::int AS n FROM stampede.jobs WHERE state <> 'done';

-- name: RemainingGraphile
-- graphile-worker deletes a job when it completes; what is left is unfinished.
SELECT count(*)::int AS n FROM graphile_worker._private_jobs;

-- name: RemainingPgBoss
-- pg-boss keeps completed rows (state 'completed'); unfinished ones are below it.
SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry', 'active');

-- name: RawCreateTable
-- The physical limit: a queue table with nothing but what a claim needs.
CREATE TABLE raw_jobs (
  id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  state   smallint NOT NULL DEFAULT 0,
  run_at  timestamptz NOT NULL DEFAULT now(),
  payload jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX raw_jobs_due ON raw_jobs (run_at, id) WHERE state = 0;
-- The same insert with the wake-up every queue here sends: a NOTIFY takes a
-- server-wide lock at commit, which serialises the commits that carry one.
CREATE TABLE raw_jobs_notify (LIKE raw_jobs INCLUDING ALL);
CREATE FUNCTION raw_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_notify('raw_jobs', ''); RETURN NULL; END $$;
CREATE TRIGGER raw_jobs_notify AFTER INSERT ON raw_jobs_notify FOR EACH STATEMENT EXECUTE FUNCTION raw_notify();

-- name: RawInsertOne
INSERT INTO raw_jobs (payload) VALUES ($1::jsonb);

-- name: RawInsertOneNotify
INSERT INTO raw_jobs_notify (payload) VALUES ($1::jsonb);

-- name: RawFill
INSERT INTO raw_jobs (payload) SELECT jsonb_build_object('i', g) FROM generate_series(1, $1::int) g;

-- name: RawTruncate
TRUNCATE raw_jobs;

-- name: RawVacuum
VACUUM ANALYZE raw_jobs;

-- name: RawClaimAndDone
-- Claim 50 with SKIP LOCKED and mark them done, one statement, one commit:
-- the least work any SKIP LOCKED queue can do per batch.
WITH c AS (
  SELECT id FROM raw_jobs WHERE state = 0 AND run_at <= now()
   ORDER BY run_at, id LIMIT 50 FOR UPDATE SKIP LOCKED
)
UPDATE raw_jobs r SET state = 2 FROM c WHERE r.id = c.id RETURNING r.id;

-- name: RawClaim
-- Claim 50 (first of two commits: a queue must record the claim before running the job).
WITH c AS (
  SELECT id FROM raw_jobs WHERE state = 0 AND run_at <= now()
   ORDER BY run_at, id LIMIT 50 FOR UPDATE SKIP LOCKED
)
UPDATE raw_jobs r SET state = 1 FROM c WHERE r.id = c.id RETURNING r.id;

-- name: RawDone
-- Mark a claimed batch done (second commit).
UPDATE raw_jobs SET state = 2 WHERE id = ANY($1::bigint[]);

-- name: RawDoneThenClaim
-- The two writes of RawClaim and RawDone, one commit per batch: the batch
-- claimed last time is marked done in the statement that claims the next
-- (a queue that sent its completions along with its next claim). `done` says
-- which rows are the completions.
WITH d AS (
  UPDATE raw_jobs SET state = 2 WHERE id = ANY($1::bigint[]) RETURNING id
), c AS (
  SELECT id FROM raw_jobs WHERE state = 0 AND run_at <= now()
   ORDER BY run_at, id LIMIT 50 FOR UPDATE SKIP LOCKED
), u AS (
  UPDATE raw_jobs r SET state = 1 FROM c WHERE r.id = c.id RETURNING r.id
)
SELECT id, false AS done FROM u UNION ALL SELECT id, true FROM d;

-- name: ScaleGenerateFinished
-- Finished rows for the scale workload, made by the server in one statement:
-- done jobs that ran over the past week, spread over 20 queues.
INSERT INTO stampede.jobs (queue, state, attempts, payload, run_at, created_at, updated_at, finished_at)
SELECT 'hist' || (g % 20), 'done', 1, jsonb_build_object('n', g),
       now() - make_interval(secs => g % 604800), now() - make_interval(secs => g % 604800),
       now() - make_interval(secs => g % 604800), now() - make_interval(secs => g % 604800)
  FROM generate_series(1, $1::bigint) AS g;

-- name: ScaleFillPending
-- Due jobs for the claims to take.
INSERT INTO stampede.jobs (queue, payload) SELECT 'bench', jsonb_build_object('i', g) FROM generate_series(1, $1::int) g;

-- name: ScaleFinishClaimed
-- Between scale points: what the timed claims took is marked done, as a worker would.
UPDATE stampede.jobs SET state = 'done', finished_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
 WHERE state = 'claimed';

-- name: ScaleCountDue
SELECT count(*)::int AS n FROM stampede.jobs WHERE state IN ('pending', 'failed');

-- name: ExplainPrefix
-- Prepended to the claim statement to show its plan (run in a transaction that is rolled back).
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)

-- name: ScaleVacuum
-- So the claims are measured against a settled table, not a running autovacuum.
VACUUM (ANALYZE) stampede.jobs;

-- name: TableSizes
-- Heap, indexes and rows of the jobs table: the bytes-per-row figure of docs/scaling.md.
SELECT pg_table_size('stampede.jobs')::bigint AS heap_bytes,
       pg_indexes_size('stampede.jobs')::bigint AS index_bytes,
       pg_relation_size('stampede.jobs_due_idx')::bigint AS due_index_bytes,
       (SELECT count(*) FROM stampede.jobs)::bigint AS rows;

-- name: WalLsn
SELECT pg_current_wal_lsn()::text AS lsn;

-- name: WalBytesSince
SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint AS bytes;

-- name: ArchiveGenerateDone
-- Done jobs for the archive workload, all finished two hours ago (one day partition).
INSERT INTO stampede.jobs (queue, state, attempts, payload, run_at, created_at, updated_at, finished_at)
SELECT 'hist' || (g % 20), 'done', 1, jsonb_build_object('n', g),
       now() - interval '2 hours', now() - interval '2 hours', now() - interval '2 hours', now() - interval '2 hours'
  FROM generate_series(1, $1::bigint) AS g;

-- name: ArchiveCreatePartitions
-- Outside the timed pass, so the timing is the moves.
SELECT stampede.create_job_history_partitions(2, ((now() - interval '1 day') AT TIME ZONE 'UTC')::date);

-- name: HistorySize
-- Every day partition of stampede.job_history with its indexes.
SELECT coalesce(sum(pg_total_relation_size(i.inhrelid)), 0)::bigint AS bytes
  FROM pg_inherits i WHERE i.inhparent = 'stampede.job_history'::regclass;

-- name: ArchiveDropAll
-- Retention as if every day had passed: the whole-partition drop, timed.
SELECT stampede.drop_job_history_partitions(1, now() + interval '30 days');
