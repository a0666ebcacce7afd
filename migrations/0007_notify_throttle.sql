-- Throttle the enqueue NOTIFY.
--
-- A transaction that sends NOTIFY takes a database-wide lock from just before
-- its commit until the commit is done, so notifying commits cannot share a
-- disk flush: measured here (npm run bench, "physical limit"), 16 clients
-- commit 1,807 single-row INSERTs/s, but only 253/s when each also notifies.
-- At a few hundred enqueues a second the notification, not the insert, was
-- the ceiling.
--
-- So a statement notifies only when no other did in the last 10 ms. The
-- time of the last notification lives in a sequence because setval() is not
-- transactional and takes no lock held to commit: racing statements may both
-- notify (harmless), none waits. A job whose statement skipped the NOTIFY is
-- still found at once: a worker woken by a notification claims again 50 ms
-- later (the trailing claim, engine/worker/worker.ts), and the poll bounds
-- the rest.
CREATE SEQUENCE stampede.notify_clock_ms AS bigint MINVALUE 0 START 0;

CREATE OR REPLACE FUNCTION stampede.notify_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  now_ms bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
BEGIN
  IF now_ms - (SELECT last_value FROM stampede.notify_clock_ms) >= 10 THEN
    PERFORM setval('stampede.notify_clock_ms', now_ms);
    PERFORM pg_notify('stampede_jobs', '');
  END IF;
  RETURN NULL;
END $$;
