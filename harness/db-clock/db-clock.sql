-- name: InstallDbClock
-- The simulated database clock (docs/time.md). A function stampede_sim.now()
-- in a schema the run's database puts BEFORE pg_catalog in its search_path
-- (SetSearchPath): every unqualified now() the engine sends, and every plpgsql
-- function without its own SET search_path, then resolves to it. Production
-- never creates this schema; its SQL is the same text either way.
--
-- Its body is the real clock plus the offset as a constant, and set_offset
-- rewrites it at each step. A body that read the offset from a table would
-- not be inlined (a subquery stops the planner from inlining a SQL function),
-- so every now() would be a function call that runs a query: 8 µs each on
-- the shared 2-core machine, over a million of them in a poison-herd run.
-- Inlined, `run_at <= now()`
-- plans as `run_at <= (pg_catalog.now() + '01:00:00'::interval)`, as cheap as
-- production's. Redefining the function invalidates every session's cached
-- plans that inlined it, so each open session sees the new offset from its
-- next statement on. The table keeps the offset the body was written from.
CREATE SCHEMA IF NOT EXISTS stampede_sim;
CREATE TABLE IF NOT EXISTS stampede_sim.clock (
  id        int PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  offset_ms float8 NOT NULL DEFAULT 0
);
INSERT INTO stampede_sim.clock (id) VALUES (1) ON CONFLICT DO NOTHING;
CREATE OR REPLACE FUNCTION stampede_sim.set_offset(new_offset_ms float8) RETURNS float8
  LANGUAGE plpgsql VOLATILE
  AS $$
BEGIN
  UPDATE stampede_sim.clock SET offset_ms = new_offset_ms;
  EXECUTE format('CREATE OR REPLACE FUNCTION stampede_sim.now() RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS %L',
                 format('SELECT pg_catalog.now() + %L::interval', new_offset_ms || ' milliseconds'));
  RETURN new_offset_ms;
END $$;
SELECT stampede_sim.set_offset(offset_ms) FROM stampede_sim.clock;

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
-- database time before and after. One statement, so one transaction: nothing
-- can be claimed in between by the old time and counted by the new. Its own
-- now() was inlined when it was planned, so `before` is the old time however
-- the CTEs are ordered.
WITH before AS (
  SELECT now() AS t
), stepped AS (
  SELECT stampede_sim.set_offset(c.offset_ms + $1::float8) AS offset_ms FROM stampede_sim.clock c
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

-- name: MsToMinute
-- How far forward to step the database clock so that a minute of it begins
-- $1 ms from now (docs/time.md: db-clock-jump's minuteAtS): in [0, 60 s).
-- Also the database time now, for the record.
SELECT now() AS db_now,
       (ceil(extract(epoch FROM now() + make_interval(secs => $1::float8 / 1000)) / 60) * 60
        - extract(epoch FROM now() + make_interval(secs => $1::float8 / 1000))) * 1000 AS step_ms;

-- name: DbNow
-- The database's now(): the simulated clock where it is installed.
SELECT now() AS now;
