-- name: EnqueueOne
-- One INSERT, committed before enqueue() resolves (or with the caller's
-- transaction). A repeated idempotency key inserts nothing and returns the
-- first job; the SELECT arm finds it when the INSERT arm stood down.
WITH inserted AS (
  INSERT INTO stampede.jobs (queue, payload, priority, max_attempts, idempotency_key, run_at, fairness_key, trace_parent)
  VALUES ($1, $2::jsonb, $3,
          coalesce($4::int, (SELECT max_attempts FROM stampede.queue_settings WHERE queue = $1), $8::int),
          $5,
          coalesce($6::timestamptz, now() + make_interval(secs => $7::float8 / 1000)),
          $9::text, $10::text)
  ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING id, run_at, idempotency_key, true AS inserted
)
SELECT * FROM inserted
UNION ALL
SELECT id, run_at, idempotency_key, false FROM stampede.jobs
 WHERE $5::text IS NOT NULL AND idempotency_key = $5 AND NOT EXISTS (SELECT 1 FROM inserted);

-- name: FindByIdempotencyKey
SELECT id, run_at, idempotency_key, false AS inserted FROM stampede.jobs WHERE idempotency_key = $1;

-- name: EnqueueMany
-- A bulk load in one statement: parallel arrays, one row per index.
INSERT INTO stampede.jobs (queue, payload, priority, max_attempts, idempotency_key, run_at, fairness_key, trace_parent)
SELECT q, p, pr,
       coalesce(ma, (SELECT s.max_attempts FROM stampede.queue_settings s WHERE s.queue = t.q), $8::int),
       k, coalesce(ra, now() + make_interval(secs => d / 1000)), fk, tp
  FROM unnest($1::text[], $2::jsonb[], $3::smallint[], $4::int[], $5::text[], $6::timestamptz[], $7::float8[], $9::text[], $10::text[])
       AS t(q, p, pr, ma, k, ra, d, fk, tp)
ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
RETURNING id, run_at, idempotency_key, true AS inserted;

-- name: SetQueueMaxAttempts
INSERT INTO stampede.queue_settings (queue, max_attempts) VALUES ($1, $2)
ON CONFLICT (queue) DO UPDATE SET max_attempts = EXCLUDED.max_attempts;
