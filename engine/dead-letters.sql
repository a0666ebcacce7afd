-- name: DeadLetterDepth
-- The alert signal. dead_letters holds only dead jobs (a redrive removes the
-- row), so this counts a small table, not the job history.
SELECT count(*)::bigint AS depth FROM stampede.dead_letters WHERE ($1::text IS NULL OR queue = $1);

-- name: ListDeadLetters
SELECT job_id, queue, payload, attempts, reason, errors, died_at
  FROM stampede.dead_letters
 WHERE ($1::text IS NULL OR queue = $1)
 ORDER BY died_at DESC, job_id DESC
 LIMIT $2;

-- name: RedriveDeadLetter
-- Moves a dead job back to pending with a fresh attempt budget; its error
-- history stays on the job row.
WITH removed AS (
  DELETE FROM stampede.dead_letters WHERE job_id = $1 RETURNING job_id
)
UPDATE stampede.jobs j
   SET state = 'pending', attempts = 0, crash_count = 0, run_at = now(), finished_at = NULL, updated_at = now()
  FROM removed
 WHERE j.id = removed.job_id AND j.state = 'dead'
RETURNING j.id;
