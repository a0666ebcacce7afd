-- Worker runtime: per-queue settings and the dedup store behind effectOnce.

-- Per-queue defaults that enqueue applies when a job does not say otherwise.
CREATE TABLE stampede.queue_settings (
  queue        text PRIMARY KEY CHECK (queue ~ '^[A-Za-z0-9_.:-]{1,128}$'),
  max_attempts integer CHECK (max_attempts > 0)
);

-- One row per effect that has happened. effectOnce inserts the key in the
-- same transaction as the handler's writes and the job's completion, so the
-- key exists if and only if the effect committed.
CREATE TABLE stampede.effect_keys (
  key        text PRIMARY KEY,
  job_id     bigint NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX effect_keys_applied_at_idx ON stampede.effect_keys (applied_at);
