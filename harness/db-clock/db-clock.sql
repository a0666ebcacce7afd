-- name: InstallDbClock
-- The simulated database clock (docs/time.md). A function stampede_sim.now()
-- that reads the real clock plus an offset the harness moves, in a schema the
-- run's database puts BEFORE pg_catalog in its search_path (SetSearchPath):
-- every unqualified now() the engine sends, and every plpgsql function
-- without its own SET search_path, then resolves to it. Production never
-- creates this schema; its SQL is the same text either way.
-- STABLE, as pg_catalog.now() is: evaluated once per index scan key, and the
-- same value within a statement as long as the offset does not move.
CREATE SCHEMA IF NOT EXISTS stampede_sim;
CREATE TABLE IF NOT EXISTS stampede_sim.clock (
  id        int PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  offset_ms float8 NOT NULL DEFAULT 0
);
INSERT INTO stampede_sim.clock (id) VALUES (1) ON CONFLICT DO NOTHING;
CREATE OR REPLACE FUNCTION stampede_sim.now() RETURNS timestamptz
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT pg_catalog.now() + make_interval(secs => (SELECT offset_ms FROM stampede_sim.clock) / 1000) $$;

-- name: SetSearchPath
-- Puts stampede_sim before pg_catalog for every session opened from now on
-- (pg_catalog is searched first only when the path does not name it).
-- Sessions already open keep their path: the runner opens its own pools, and
-- starts the workers and scheduler nodes, after this.
DO $$ BEGIN
  EXECUTE format('ALTER DATABASE %I SET search_path = stampede_sim, pg_catalog, "$user", public', current_database());
END $$;

-- name: StepDbClock
-- Steps the simulated database clock forward by $1 ms (NTP correcting a
-- drifted clock, a VM resumed after suspend) and says what became due: the
-- claimable jobs whose run_at fell inside the step, by origin. Returns the
-- database time before and after. One transaction: nothing can be claimed in
-- between by the old time and counted by the new.
WITH before AS (
  SELECT now() AS t
), stepped AS (
  UPDATE stampede_sim.clock SET offset_ms = offset_ms + $1::float8 RETURNING offset_ms
), jumped AS (
  SELECT j.state, j.idempotency_key, j.attempts
    FROM stampede.jobs j, before b
   WHERE j.state IN ('pending', 'failed')
     AND j.run_at > b.t AND j.run_at <= b.t + make_interval(secs => $1::float8 / 1000)
)
SELECT (SELECT t FROM before) AS db_before,
       (SELECT t FROM before) + make_interval(secs => $1::float8 / 1000) AS db_after,
       (SELECT offset_ms FROM stepped) AS offset_ms,
       count(*) FILTER (WHERE idempotency_key LIKE 'cron:%')::int AS cron,
       count(*) FILTER (WHERE state = 'failed' AND idempotency_key NOT LIKE 'cron:%' IS NOT FALSE)::int AS retry,
       count(*) FILTER (WHERE state = 'pending' AND idempotency_key NOT LIKE 'cron:%' IS NOT FALSE)::int AS delayed
  FROM jumped;
