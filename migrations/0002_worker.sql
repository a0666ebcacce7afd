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

-- Suspects: due jobs that were in flight when a worker died (crash_count > 0).
-- A worker runs a suspect alone, so that a second crash convicts the job that
-- caused it and not the innocent jobs that happened to share the process.
-- Few rows, so a small index; the normal claim skips them.
CREATE INDEX jobs_suspect_idx ON stampede.jobs (queue, run_at, id)
  WHERE state IN ('pending', 'failed') AND crash_count > 0;
