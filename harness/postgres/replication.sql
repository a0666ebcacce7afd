-- Queries of the failover rig (harness/postgres/standby.ts): the primary's
-- replication slot and state, the standby's position, the promotion.

-- name: CreateStandbySlot
-- Reserved at once (immediately_reserve), before the data dir is copied: the
-- primary keeps every WAL segment from here until the standby has it, so the
-- standby can never fall behind the WAL it needs.
SELECT pg_create_physical_replication_slot($1, true) AS slot;

-- name: SetSynchronousStandby
-- Set on the primary after the copy, so the standby (and the primary it
-- becomes) does not wait for a standby of its own.
ALTER SYSTEM SET synchronous_standby_names = 'stampede_standby';

-- name: ReloadConf
SELECT pg_reload_conf() AS reloaded;

-- name: ReplicationState
-- The primary's view of the standby ($1, its application_name), one row even
-- when it is not connected: the mode (sync_state), how far it has written,
-- flushed and replayed in bytes behind the primary's WAL, and the lag times
-- the primary measured from its replies.
SELECT r.state, r.sync_state,
       pg_current_wal_lsn()::text AS primary_lsn,
       r.replay_lsn::text AS replay_lsn,
       pg_wal_lsn_diff(pg_current_wal_lsn(), r.write_lsn)::float8 AS write_behind_bytes,
       pg_wal_lsn_diff(pg_current_wal_lsn(), r.flush_lsn)::float8 AS flush_behind_bytes,
       pg_wal_lsn_diff(pg_current_wal_lsn(), r.replay_lsn)::float8 AS replay_behind_bytes,
       (extract(epoch FROM r.write_lag) * 1000)::float8 AS write_lag_ms,
       (extract(epoch FROM r.replay_lag) * 1000)::float8 AS replay_lag_ms,
       current_setting('synchronous_standby_names') AS synchronous_standby_names,
       current_setting('synchronous_commit') AS synchronous_commit,
       (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS at_ms
  FROM (SELECT 1) one
  LEFT JOIN pg_stat_replication r ON r.application_name = $1;

-- name: StandbyPosition
-- The standby's own position: the last WAL received and replayed, the commit
-- time (primary's clock) of the last transaction replayed, and how many bytes
-- it is behind the primary's last position ($1, read just before the kill).
SELECT pg_is_in_recovery() AS in_recovery,
       pg_last_wal_receive_lsn()::text AS receive_lsn,
       pg_last_wal_replay_lsn()::text AS replay_lsn,
       (extract(epoch FROM pg_last_xact_replay_timestamp()) * 1000)::float8 AS last_replayed_commit_ms,
       pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn())::float8 AS behind_bytes,
       (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS at_ms;

-- name: Promote
-- Waits (up to 60 s) until the standby is a primary that accepts writes.
SELECT pg_promote(true, 60) AS promoted;

-- name: MissingAcknowledgedEnqueues
-- The independent count: of the acknowledged enqueues ($1 ids, $2 their ops),
-- how many have no row of that id carrying that op, live or archived, on the
-- promoted primary. A row of that id with another op is a reused id: its
-- acknowledged job is missing too.
SELECT count(*)::int AS missing
  FROM unnest($1::bigint[], $2::int[]) AS a(id, op)
 WHERE NOT EXISTS (SELECT 1 FROM stampede.jobs j WHERE j.id = a.id AND (j.payload->>'op')::int = a.op)
   AND NOT EXISTS (SELECT 1 FROM stampede.job_history h WHERE h.id = a.id AND (h.payload->>'op')::int = a.op);
