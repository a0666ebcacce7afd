-- name: CreateHarnessTables
-- The harness's own tables, beside stampede's schema in the run's database.
-- effects has no unique key on purpose: a duplicate effect must be visible,
-- so the exactly-one-effect check can see it.
CREATE SCHEMA IF NOT EXISTS harness;
CREATE TABLE IF NOT EXISTS harness.effects (
  key        text NOT NULL,
  job_id     bigint NOT NULL,
  worker_id  text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE IF NOT EXISTS harness.dependency (
  id         int PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  outage     boolean NOT NULL DEFAULT false,
  error_rate float8 NOT NULL DEFAULT 1
);
INSERT INTO harness.dependency (id) VALUES (1) ON CONFLICT DO NOTHING;
CREATE TABLE IF NOT EXISTS harness.stop_points (
  seq      int PRIMARY KEY,
  point    text NOT NULL,
  taken_by text
);

-- name: LogSamplerRounds
-- Every round the elected queue-state sampler writes (stampede.queue_state_rounds
-- keeps only the latest): who wrote it and when, on the host's real clock
-- (clock_timestamp(), not now(), which a simulated database clock moves), so
-- one-round-per-interval can set rounds beside worker exits. A trigger the
-- harness adds to its own run's database; the engine's SQL knows nothing of it.
CREATE TABLE IF NOT EXISTS harness.sampler_rounds (
  round_no   bigint NOT NULL,
  leader     text NOT NULL,
  written_at timestamptz NOT NULL
);
CREATE OR REPLACE FUNCTION harness.log_sampler_round() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO harness.sampler_rounds (round_no, leader, written_at) VALUES (NEW.round_no, NEW.leader, pg_catalog.clock_timestamp());
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER sampler_round_logged AFTER INSERT OR UPDATE ON stampede.queue_state_rounds
  FOR EACH ROW EXECUTE FUNCTION harness.log_sampler_round();

-- name: SetDependencyOutage
UPDATE harness.dependency SET outage = $1, error_rate = $2;

-- name: ReadDependency
SELECT outage, error_rate FROM harness.dependency;

-- name: ArmStopPoint
-- A worker-stop fault armed at a point (`seq` is the fault action's).
INSERT INTO harness.stop_points (seq, point) VALUES ($1, $2) ON CONFLICT (seq) DO NOTHING;

-- name: TakeStopPoint
-- The first worker to reach an armed stop point takes it and freezes; every
-- other armed worker runs on. Decided here, not over IPC, where a disarm can
-- arrive after a second worker already reached the point.
UPDATE harness.stop_points SET taken_by = $2 WHERE seq = $1 AND taken_by IS NULL RETURNING seq;

-- name: CloseStopPoint
-- The harness gives up waiting: no worker may take the stop after this, since
-- nobody would resume it. No row back: a worker took it first.
UPDATE harness.stop_points SET taken_by = '' WHERE seq = $1 AND taken_by IS NULL RETURNING seq;

-- name: RecordEffect
INSERT INTO harness.effects (key, job_id, worker_id) VALUES ($1, $2, $3);

-- name: FinalJobs
-- Not due yet: as of the drain's end ($1, the database's time then; now() when
-- there was none). A row a cron node wrote ahead, falling due while the fleet
-- stops, was not the drain's to run.
SELECT id, queue, state::text AS state, attempts, priority, idempotency_key, payload->>'kind' AS kind,
       floor(extract(epoch FROM run_at) * 1000)::float8 AS run_at_ms,
       (state = 'pending' AND run_at > coalesce($1::timestamptz, now())) AS not_due_yet,
       max_attempts, crash_count, jsonb_array_length(errors) AS error_count, payload->>'producerKey' AS producer_key, (payload->>'op')::int AS op
  FROM stampede.jobs ORDER BY id;

-- name: FinalArchivedJobs
-- The jobs the archiver moved out of the hot table: no-job-lost counts them,
-- archive-once judges where each done job ended up and how old it was.
SELECT id, queue, state::text AS state, attempts, priority, idempotency_key, payload->>'kind' AS kind,
       floor(extract(epoch FROM run_at) * 1000)::float8 AS run_at_ms,
       max_attempts, crash_count, jsonb_array_length(errors) AS error_count, payload->>'producerKey' AS producer_key, (payload->>'op')::int AS op,
       floor(extract(epoch FROM finished_at) * 1000)::float8 AS finished_at_ms,
       floor(extract(epoch FROM archived_at) * 1000)::float8 AS archived_at_ms
  FROM stampede.job_history ORDER BY id;

-- name: FinalEffectKeys
-- The dedup keys still present; with the effect rows' ages, prune-retention
-- tells a key pruned after its retention from one pruned early.
SELECT key, floor(extract(epoch FROM now()) * 1000)::float8 AS db_now_ms FROM stampede.effect_keys
UNION ALL
SELECT NULL, floor(extract(epoch FROM now()) * 1000)::float8;

-- name: FinalSchedules
-- Each schedule's policies and zone as the database holds them: the cron
-- checker counts what it judged per DST policy, catch-up policy and zone.
SELECT id, cron, timezone, dst_policy, catch_up FROM stampede.schedules ORDER BY id;

-- name: FinalDeadLetters
SELECT job_id, code, reason, attempts, jsonb_array_length(errors) AS error_count FROM stampede.dead_letters ORDER BY job_id;

-- name: FinalAudit
-- Every operator action's audit rows: operator-audited matches them to the verbs the run issued.
SELECT verb, queue, job_id, actor, reason FROM stampede.control_audit ORDER BY id;

-- name: SamplerRounds
-- The elected samplers' rounds, in the order they were written (sampler:round events).
SELECT round_no::float8 AS round_no, leader, floor(extract(epoch FROM written_at) * 1000)::float8 AS written_at_ms
  FROM harness.sampler_rounds ORDER BY round_no;

-- name: FinalEffectRows
SELECT key, job_id, worker_id, floor(extract(epoch FROM applied_at) * 1000)::float8 AS applied_at_ms
  FROM harness.effects ORDER BY applied_at;

-- name: FinalEffects
SELECT key, count(*)::int AS n FROM harness.effects GROUP BY key;

-- name: Unfinished
-- Rows a cron node wrote ahead of time (run_at still in the future) are not
-- the run's to drain: they are scheduled, not late. A job that has run
-- before and was handed back for a retry shortly (a deferral: its effect's
-- key was held) is the run's, although its run_at is a moment ahead.
SELECT count(*)::int AS n, now() AS db_now FROM stampede.jobs
 WHERE state NOT IN ('done', 'dead', 'cancelled') AND NOT (state = 'pending' AND run_at > now() AND attempts = 0);

-- name: UndeliveredIntents
-- Outbox rows a relay has still to deliver: the drain waits for them too.
SELECT count(*)::int AS n FROM stampede.outbox WHERE state = 'pending';

-- name: DueInQueue
-- The queue-pause fault's evidence: due jobs of the queue waiting (rides jobs_due_idx).
SELECT count(*)::int AS n FROM stampede.jobs WHERE queue = $1 AND state IN ('pending', 'failed') AND run_at <= now();

-- name: PickJobs
-- The operator faults' targets: up to $3 jobs of queue $1 (NULL: any) in state
-- $2 of the kinds $4 (NULL: any), oldest first. `failed` means waiting out a
-- backoff (run_at ahead); `pending` leaves suspects out (a crash's rescue is
-- not an operator's pending job); `claimed` takes only live leases, the
-- newest job first (the most work left). Never the jobs $5 (already picked).
SELECT id FROM stampede.jobs
 WHERE state = $2::text::stampede.job_state AND ($1::text IS NULL OR queue = $1)
   AND ($4::text[] IS NULL OR payload->>'kind' = ANY ($4::text[]))
   AND ($2 <> 'failed' OR run_at > now()) AND ($2 <> 'pending' OR crash_count = 0)
   AND ($2 <> 'claimed' OR lease_expires_at > now())
   AND id <> ALL ($5::bigint[])
 ORDER BY CASE WHEN $2 = 'claimed' THEN id END DESC NULLS LAST, id
 LIMIT $3;

-- name: PickDeadByCode
-- Dead jobs of queue $1 (NULL: any) whose dead letter's code is one of $2, oldest death first.
SELECT job_id AS id FROM stampede.dead_letters
 WHERE ($1::text IS NULL OR queue = $1) AND code = ANY ($2::text[])
 ORDER BY died_at, job_id
 LIMIT $3;

-- name: AuditRowsBy
-- How many operator actions the audit holds under actor $1 (the cli-typos fault's typist: a refused command adds none).
SELECT count(*)::int AS n FROM stampede.control_audit WHERE actor = $1;

-- name: JobStates
-- Each job's state as an operator fault saw it before and after its verb; an archived one reads `archived`.
SELECT id, state::text AS state FROM stampede.jobs WHERE id = ANY ($1::bigint[])
UNION ALL
SELECT id, 'archived' FROM stampede.job_history WHERE id = ANY ($1::bigint[]);

-- name: DeadLettersOfQueue
SELECT job_id, reason FROM stampede.dead_letters WHERE queue = $1 ORDER BY job_id;

-- name: SuspectsDue
-- A pause-with-suspect fault's evidence: jobs of the queue that crashed a worker and are due again.
SELECT count(*)::int AS n FROM stampede.jobs
 WHERE queue = $1 AND state IN ('pending', 'failed') AND crash_count > 0 AND run_at <= now();

-- name: TerminateWorkerBackends
SELECT count(*)::int AS n FROM (
  SELECT pg_terminate_backend(pid) FROM pg_stat_activity
   WHERE datname = current_database() AND pid <> pg_backend_pid()
     AND ($1::boolean OR application_name LIKE 'stampede:worker%')
) t;

-- name: HoldXmin
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT txid_current();

-- name: HarnessQueueState
-- The harness's own instrument, deliberately not the engine's sampler
-- (engine/metrics/queue-state.sql): per queue, rows by state, due rows, expired
-- leases and the oldest due, unclaimed job by a plain GROUP BY (a run's table
-- is small, so a scan is fine here), the dead-letter rows, the done rows, and
-- the oldest open snapshot of another client session. It runs inside the
-- engine sampler's REPEATABLE READ transaction, so it sees what the engine saw
-- at the same now(): sampler-agrees checks the engine's figures against these
-- exactly, and the SLO and alert crossings are judged on these.
SELECT (SELECT coalesce(jsonb_object_agg(queue, jsonb_build_object(
                 'pending', pending, 'failed', failed, 'due', due, 'claimed', claimed, 'overdue', overdue,
                 'deadLetters', 0, 'oldestMs', oldest_ms)), '{}'::jsonb)
          FROM (SELECT queue,
                       count(*) FILTER (WHERE state = 'pending') AS pending,
                       count(*) FILTER (WHERE state = 'failed') AS failed,
                       count(*) FILTER (WHERE state IN ('pending', 'failed') AND run_at <= now()) AS due,
                       count(*) FILTER (WHERE state = 'claimed') AS claimed,
                       count(*) FILTER (WHERE state = 'claimed' AND lease_expires_at < now()) AS overdue,
                       coalesce(round(extract(epoch FROM now() - min(run_at) FILTER (
                         WHERE state IN ('pending', 'failed') AND run_at <= now())) * 1000), 0)::float8 AS oldest_ms
                  FROM stampede.jobs
                 WHERE state IN ('pending', 'failed', 'claimed')
                 GROUP BY queue) q) AS queues,
       (SELECT coalesce(jsonb_object_agg(queue, n), '{}'::jsonb)
          FROM (SELECT queue, count(*)::int AS n FROM stampede.dead_letters GROUP BY queue) d) AS dead_letters,
       (SELECT count(*)::int FROM stampede.jobs WHERE state = 'done') AS done,
       -- xact_start is the server's own stamp: pg_catalog.now() by name, which a
       -- simulated database clock (harness/db-clock) does not move.
       (SELECT coalesce(max(extract(epoch FROM pg_catalog.now() - xact_start)) * 1000, 0)::float8
          FROM pg_stat_activity
         WHERE datname = current_database() AND backend_type = 'client backend'
           AND backend_xmin IS NOT NULL AND pid <> pg_backend_pid()) AS xmin_age_ms;

-- name: ServerFacts
-- The db-restart fault's before/after: a new postmaster has a new start time,
-- and the backends connected to the run's database are what a crash drops.
SELECT pg_postmaster_start_time() AS started_at,
       (SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database()) AS backends;

-- name: DbNow
SELECT now() AS now;

-- name: ArchivePartitions
-- The day partitions of stampede.job_history as the catalog lists them, with
-- the database's time (the simulated clock where a db-clock-jump moved it):
-- the harness's own reading for archive-retention, not the archiver's report
-- of what it created and dropped. One statement, so one snapshot of the
-- catalog and one now().
SELECT now() AS db_now,
       coalesce(array_agg(c.relname::text ORDER BY c.relname), '{}') AS partitions
  FROM pg_inherits i
  JOIN pg_class c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'stampede.job_history'::regclass;

-- name: RewindProgressBy
-- The cron-rewind fault: every schedule's progress mark $1 ms before now(),
-- so every node computes those occurrences again.
UPDATE stampede.schedules SET last_materialized_until = now() - make_interval(secs => $1::float8 / 1000);

-- name: RewindScheduleProgress
-- Simulation only (the dst fault): a scheduler node moved to a past DST night
-- materializes from there, so every schedule's progress mark is set to that
-- instant. Rows already materialized keep their keys; nothing is deleted.
UPDATE stampede.schedules SET last_materialized_until = $1::timestamptz;

-- name: SetReadOnly
-- The read-only fault: every session's next transaction is read-only once the
-- reload reaches it (ALTER SYSTEM cannot run in a transaction block; the reload
-- is its own statement).
ALTER SYSTEM SET default_transaction_read_only = on;

-- name: ResetReadOnly
ALTER SYSTEM RESET default_transaction_read_only;

-- name: ReloadConf
SELECT pg_reload_conf() AS reloaded;

-- name: SessionReadWrite
-- The nemesis's own session, writable again whatever the server's default says, to undo the fault.
SET default_transaction_read_only = off;

-- name: WriteProbe
-- A write that changes nothing: refused with 25006 in a read-only transaction (checked as the executor starts, rows or not).
UPDATE stampede.jobs SET updated_at = updated_at WHERE false;

-- name: LockJobs
-- Inside the nemesis's transaction: every claim, renewal, completion and enqueue queues behind it.
LOCK TABLE stampede.jobs IN ACCESS EXCLUSIVE MODE;

-- name: ReadJobs
-- Inside the nemesis's transaction: the long reader a DDL then queues behind.
SELECT count(*)::int AS n FROM stampede.jobs;

-- name: QueueDdl
-- A migration's DDL (rolled back after): it needs ACCESS EXCLUSIVE, waits for the long reader, and every
-- later statement on the table queues behind it.
ALTER TABLE stampede.jobs ADD COLUMN stampede_harness_ddl integer;

-- name: JobsLockWaiters
SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'stampede.jobs'::regclass AND NOT granted;

-- name: ConnectionSlots
SELECT current_setting('max_connections')::int AS max_connections,
       current_setting('superuser_reserved_connections')::int AS reserved,
       (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS used;
