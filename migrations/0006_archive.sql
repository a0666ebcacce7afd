-- Archive and retention: finished jobs leave the hot table, and history is
-- kept by the day and dropped by the day.
--
-- At 500 jobs/s a week is ~300M jobs. Kept in stampede.jobs they would make
-- every vacuum, every index build and every backup of the hot table scale
-- with history, and deleting expired rows would be a mass DELETE followed by
-- a vacuum storm. So:
--   * the JobArchiver (engine/archive/) moves `done` rows older than its
--     archiveAfterMs from stampede.jobs to stampede.job_history, in batches
--     (LIMIT, FOR UPDATE SKIP LOCKED, one DELETE ... RETURNING feeding one
--     INSERT, so a row is in exactly one of the two tables at every commit);
--   * stampede.job_history is partitioned by day on finished_at (UTC), and
--     retention drops whole day partitions: constant time whatever the row
--     count, no dead tuples, nothing for vacuum to do afterwards;
--   * `dead` rows stay in stampede.jobs: stampede.dead_letters references
--     them and a redrive moves them back to pending. They are few, and the
--     operator's business.
-- Sizing and the measurements behind these choices: docs/scaling.md.

-- The archiver finds done rows by age. Without this it would scan the table;
-- with it, each batch reads the oldest done rows straight off an index that
-- holds only done rows, i.e. roughly archiveAfterMs worth of completions.
-- Cost on the write path: one index entry per completion.
CREATE INDEX jobs_done_finished_idx ON stampede.jobs (finished_at) WHERE state = 'done';

CREATE TABLE stampede.job_history (
  id               bigint NOT NULL,
  queue            text NOT NULL,
  priority         smallint NOT NULL,
  state            stampede.job_state NOT NULL,
  run_at           timestamptz NOT NULL,
  attempts         integer NOT NULL,
  max_attempts     integer NOT NULL,
  crash_count      integer NOT NULL,
  payload          jsonb NOT NULL,
  idempotency_key  text,
  last_error       text,
  errors           jsonb NOT NULL,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  finished_at      timestamptz NOT NULL,
  archived_at      timestamptz NOT NULL DEFAULT now(),
  -- A unique key on a partitioned table must contain the partition key.
  PRIMARY KEY (id, finished_at)
) PARTITION BY RANGE (finished_at);

-- "What happened to the jobs of queue X yesterday": per partition, small.
CREATE INDEX job_history_queue_idx ON stampede.job_history (queue, finished_at);

-- The partition that holds `day` (UTC), e.g. job_history_p20261130.
CREATE FUNCTION stampede.job_history_partition_name(day date) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT 'job_history_p' || to_char(day, 'YYYYMMDD') $$;

-- Creates the day partitions from `from_day` to today + ahead_days (UTC),
-- those that do not exist yet. Returns the names it created. The archiver
-- calls it before moving rows, with from_day = the oldest done row's day,
-- so an insert never finds no partition (there is deliberately no DEFAULT
-- partition: rows in one would have to be scanned whenever a day partition
-- is added).
CREATE FUNCTION stampede.create_job_history_partitions(ahead_days int, from_day date DEFAULT NULL, p_now timestamptz DEFAULT NULL)
RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  today   date := (coalesce(p_now, now()) AT TIME ZONE 'UTC')::date;
  day     date := least(coalesce(from_day, today), today);
  name    text;
  created text[] := '{}';
BEGIN
  IF ahead_days < 0 THEN
    RAISE EXCEPTION 'ahead_days: expected a number of days >= 0, got %', ahead_days USING ERRCODE = 'invalid_parameter_value';
  END IF;
  WHILE day <= today + ahead_days LOOP
    name := stampede.job_history_partition_name(day);
    IF to_regclass(format('stampede.%I', name)) IS NULL THEN
      EXECUTE format(
        'CREATE TABLE stampede.%I PARTITION OF stampede.job_history FOR VALUES FROM (%L) TO (%L)',
        name, (day::timestamp AT TIME ZONE 'UTC'), ((day + 1)::timestamp AT TIME ZONE 'UTC'));
      created := created || name;
    END IF;
    day := day + 1;
  END LOOP;
  RETURN created;
END $$;

-- Drops the day partitions that end at or before today - retention_days
-- (UTC): a history row lives at least retention_days and at most one day
-- more. DROP TABLE of a partition removes its files; it does not touch rows
-- one by one, so its cost does not grow with the rows it removes. It takes a
-- brief ACCESS EXCLUSIVE lock on stampede.job_history (not on stampede.jobs).
CREATE FUNCTION stampede.drop_job_history_partitions(retention_days int, p_now timestamptz DEFAULT NULL)
RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  cutoff  date := (coalesce(p_now, now()) AT TIME ZONE 'UTC')::date - retention_days;
  part    record;
  dropped text[] := '{}';
BEGIN
  IF retention_days < 1 THEN
    RAISE EXCEPTION 'retention_days: expected a number of days >= 1, got %', retention_days USING ERRCODE = 'invalid_parameter_value';
  END IF;
  FOR part IN
    SELECT c.relname
      FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'stampede.job_history'::regclass
       AND c.relname ~ '^job_history_p[0-9]{8}$'
       -- The partition for day d holds [d, d + 1); it is past retention when d + 1 <= cutoff.
       AND to_date(substring(c.relname FROM 14), 'YYYYMMDD') + 1 <= cutoff
     ORDER BY c.relname
  LOOP
    EXECUTE format('DROP TABLE stampede.%I', part.relname);
    dropped := dropped || part.relname::text;
  END LOOP;
  RETURN dropped;
END $$;

-- Autovacuum for the hot table. stampede.jobs is a queue: every row is
-- inserted, updated at least twice (claim, completion; more with retries and
-- heartbeats) and then deleted by the archiver, and none of those updates can
-- be HOT (each changes a column of a partial index predicate). So it makes
-- dead tuples at several times the job rate while its live size stays
-- roughly flat. The defaults wait for 20% of the table to be dead before a
-- vacuum, which on a table this churned means the due index carries
-- thousands of dead entries the claim must step over, and then a long vacuum.
--   * vacuum after 1,000 + 1% dead tuples instead of 50 + 20%: small, frequent
--     passes keep jobs_due_idx tight (the claim reads it on every poll);
--   * analyze after 1,000 + 2% changes: the planner must keep seeing the due
--     index as tiny, or the claim's plan could drift off it;
--   * insert-triggered vacuum at 1% too: sets visibility-map bits on new rows
--     early, so the sampler's index-only counts stay index-only;
--   * cost delay 1 ms (default 2): the table is small and hot; finishing the
--     pass quickly matters more than spreading its I/O.
ALTER TABLE stampede.jobs SET (
  autovacuum_vacuum_scale_factor = 0.01,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_analyze_scale_factor = 0.02,
  autovacuum_analyze_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0.01,
  autovacuum_vacuum_insert_threshold = 1000,
  autovacuum_vacuum_cost_delay = 1
);
