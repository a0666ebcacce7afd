-- The election of one queue-state sampler per database (sampler-election.ts)
-- and the round it shares (migrations/0015_queue_state_rounds.sql).

-- name: TryLeadSampling
-- A session-level advisory lock, held by the leader's own connection for as
-- long as it lives: a leader that stops, crashes or loses its connection
-- frees it with its session, and the next sampler to try takes it. Never
-- waits. The key is the one hashtext('stampede:queue-state-sampler'), apart
-- from the migrator's.
SELECT pg_try_advisory_lock(hashtext('stampede:queue-state-sampler')) AS leading;

-- name: WriteRound
-- The leader's round replaces the last one. $1 leader, $2 the snapshot (json).
INSERT INTO stampede.queue_state_rounds AS r (id, round_no, sampled_at, leader, round)
VALUES (true, 1, now(), $1, $2::jsonb)
ON CONFLICT (id) DO UPDATE
   SET round_no = r.round_no + 1, sampled_at = now(), leader = EXCLUDED.leader, round = EXCLUDED.round
RETURNING r.round_no;

-- name: ReadRound
-- The shared round if it is younger than $1 ms on the database clock; no row otherwise.
SELECT r.round, r.round_no, r.leader,
       (extract(epoch FROM now() - r.sampled_at) * 1000)::float8 AS age_ms
  FROM stampede.queue_state_rounds r
 WHERE r.sampled_at > now() - $1::float8 * interval '1 millisecond';
