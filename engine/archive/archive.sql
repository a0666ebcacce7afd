-- name: CreatePartitions
-- Day partitions of stampede.job_history from the oldest done row's day (so
-- every row the next batches move has a partition) to today + $1 days.
SELECT stampede.create_job_history_partitions(
         $1::int,
         (SELECT (min(finished_at) AT TIME ZONE 'UTC')::date FROM stampede.jobs WHERE state = 'done')
       ) AS created;

-- name: DropPartitions
-- Whole day partitions past retention ($1 days): constant time, no DELETE.
SELECT stampede.drop_job_history_partitions($1::int) AS dropped;

-- name: ArchiveBatch
-- Moves up to $2 done jobs that finished more than $1 ms ago (by the
-- database's now()) from the hot table to history, in one statement: the
-- DELETE ... RETURNING feeds the INSERT, so at every commit a row is in
-- exactly one table, and a failure (say, a missing partition) rolls both
-- back. The oldest first, off jobs_done_finished_idx. FOR UPDATE SKIP LOCKED:
-- two archivers (one per worker host) split the work instead of queueing on
-- each other, and a row someone holds a lock on right now is left for the
-- next pass. Only `done`: dead rows stay, dead_letters references them.
WITH picked AS (
  SELECT id FROM stampede.jobs
   WHERE state = 'done' AND finished_at < now() - make_interval(secs => $1::float8 / 1000)
   ORDER BY finished_at
   LIMIT $2
     FOR UPDATE SKIP LOCKED
), moved AS (
  DELETE FROM stampede.jobs j
   USING picked
   WHERE j.id = picked.id AND j.state = 'done'
  RETURNING j.id, j.queue, j.priority, j.state, j.run_at, j.attempts, j.max_attempts, j.crash_count, j.payload,
            j.idempotency_key, j.last_error, j.errors, j.created_at, j.updated_at, j.finished_at
), inserted AS (
  INSERT INTO stampede.job_history (id, queue, priority, state, run_at, attempts, max_attempts, crash_count, payload,
                                    idempotency_key, last_error, errors, created_at, updated_at, finished_at)
  SELECT id, queue, priority, state, run_at, attempts, max_attempts, crash_count, payload,
         idempotency_key, last_error, errors, created_at, updated_at, finished_at
    FROM moved
  RETURNING id
)
SELECT count(*)::int AS moved FROM inserted;
