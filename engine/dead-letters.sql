-- name: DeadLetterDepth
-- The alert signal. dead_letters holds only dead jobs (a redrive, engine/control's
-- RedriveMany, removes the row), so this counts a small table, not the job history.
SELECT count(*)::bigint AS depth FROM stampede.dead_letters WHERE ($1::text IS NULL OR queue = $1);

-- name: ListDeadLetters
SELECT job_id, queue, payload, attempts, code, reason, errors, died_at
  FROM stampede.dead_letters
 WHERE ($1::text IS NULL OR queue = $1)
 ORDER BY died_at DESC, job_id DESC
 LIMIT $2;
