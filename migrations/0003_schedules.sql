-- Recurring schedules. A row says "enqueue this payload on this queue at
-- every instant this cron expression names in this time zone". The cron
-- materializer (engine/cron/materializer.ts) turns occurrences into job rows
-- whose idempotency key is `cron:<id>:<UTC instant>`, so two nodes that
-- compute the same occurrence collapse to one row on jobs_idempotency_key_idx.
--
-- Validation (a parseable 5-field expression, a known IANA zone) happens in
-- engine/cron/schedule.ts before the INSERT, because only cron-parser and the
-- zone database can judge them; the CHECKs below are the backstop for what
-- SQL can judge.

CREATE TABLE stampede.schedules (
  -- Chosen by the operator ("nightly-report"); it appears in every occurrence
  -- key, so it may not contain the key's separator ':'.
  id           text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_.-]{1,64}$'),
  cron         text NOT NULL,
  timezone     text NOT NULL DEFAULT 'UTC',
  queue        text NOT NULL CHECK (queue ~ '^[A-Za-z0-9_.:-]{1,128}$'),
  -- A JSON object; each job gets it plus a `cron` field naming the occurrence.
  payload      jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(payload) = 'object'),
  priority     smallint NOT NULL DEFAULT 0 CHECK (priority BETWEEN 0 AND 9),
  -- NULL: the queue's default attempt budget.
  max_attempts integer CHECK (max_attempts > 0),
  -- What a wall-clock time means on DST nights; see docs/cron-dst.md.
  dst_policy   text NOT NULL DEFAULT 'shift-first'
               CHECK (dst_policy IN ('shift-first', 'shift-both', 'skip-first', 'skip-both')),
  -- What happens to occurrences nobody materialized in time (downtime, a forward clock jump).
  catch_up     text NOT NULL DEFAULT 'none' CHECK (catch_up IN ('all', 'latest', 'none')),
  enabled      boolean NOT NULL DEFAULT true,
  -- Every occurrence at or before this instant has been enqueued (or
  -- deliberately dropped by the catch-up policy). Nodes only ever move it
  -- forward (GREATEST), inside the transaction that enqueued the occurrences,
  -- so a crash between the two cannot lose an occurrence.
  last_materialized_until timestamptz NOT NULL DEFAULT now(),
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

-- The materializer reads only enabled schedules, every tick.
CREATE INDEX schedules_enabled_idx ON stampede.schedules (id) WHERE enabled;
