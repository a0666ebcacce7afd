-- name: RecordIntent
-- recordIntent: one outbox row, normally inside the effect's transaction
-- (effectOnce), so the intent exists if and only if the effect committed.
-- A key that is already there inserts nothing (RETURNING is then empty and
-- FindIntentByKey reads the first row). $5 delays the first delivery.
INSERT INTO stampede.outbox (topic, key, payload, max_attempts, run_at)
VALUES ($1, coalesce($2, gen_random_uuid()::text), $3::jsonb, $4, now() + make_interval(secs => $5::float8 / 1000))
ON CONFLICT (key) DO NOTHING
RETURNING id, key;

-- name: FindIntentByKey
SELECT id, key FROM stampede.outbox WHERE key = $1;

-- name: ClaimIntents
-- The relay's claim: up to $1 due rows (topics $4, or all when null) for relay
-- $3, in one statement.
--  * SKIP LOCKED: relays on many nodes skip each other's rows instead of
--    queueing on them; the state/run_at predicate is re-checked under the lock.
--  * The claim pushes run_at to now() + $2 (the lease, ms) and sets a fresh
--    lease_token. A relay that dies mid-delivery reports nothing; the row is
--    simply due again when the lease runs out. No rescuer is needed, and a
--    stale relay's failure report is refused by the token fence.
--  * Attempts are charged here, at claim, so a delivery that kills its relay
--    still uses one up. A due row whose budget is already spent (its last
--    delivery never reported back) goes to `dead` instead of out again.
--  * A due row that still carries a lease_token was claimed by a relay that
--    never reported: that is written into its error history.
WITH due AS (
  SELECT id FROM stampede.outbox
   WHERE state = 'pending' AND run_at <= now() AND ($4::text[] IS NULL OR topic = ANY($4::text[]))
   ORDER BY run_at, id
   LIMIT $1
     FOR UPDATE SKIP LOCKED
)
UPDATE stampede.outbox o
   SET attempts = o.attempts + CASE WHEN o.attempts < o.max_attempts THEN 1 ELSE 0 END,
       state = CASE WHEN o.attempts < o.max_attempts THEN 'pending' ELSE 'dead' END::stampede.outbox_state,
       dead_at = CASE WHEN o.attempts < o.max_attempts THEN NULL ELSE now() END,
       errors = o.errors || CASE WHEN o.lease_token IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object(
                  'attempt', o.attempts, 'at', now(),
                  'error', 'relay ' || coalesce(o.lease_owner, '?') || ' did not report; its lease expired')) END,
       last_error = CASE WHEN o.lease_token IS NULL THEN o.last_error
                         ELSE 'relay ' || coalesce(o.lease_owner, '?') || ' did not report; its lease expired' END,
       run_at = now() + make_interval(secs => $2::float8 / 1000),
       lease_token = CASE WHEN o.attempts < o.max_attempts THEN gen_random_uuid() END,
       lease_owner = CASE WHEN o.attempts < o.max_attempts THEN $3 END
  FROM due
 WHERE o.id = due.id
RETURNING o.id, o.topic, o.key, o.payload, o.state, o.attempts, o.max_attempts, o.lease_token, o.last_error, o.created_at;

-- name: MarkDelivered
-- The receiver acknowledged. Deliberately not fenced on the lease token: a
-- delivery that succeeded is a fact whoever made it, and marking it stops a
-- second relay (which took the row after a lease ran out) from sending it yet
-- again. Returns nothing when it was already marked.
UPDATE stampede.outbox
   SET state = 'delivered', delivered_at = now(), dead_at = NULL, lease_token = NULL, lease_owner = NULL
 WHERE id = $1 AND state <> 'delivered'
RETURNING id;

-- name: FailDelivery
-- A failed delivery, fenced on the lease token so a relay whose lease ran
-- out cannot reschedule a row another relay now holds. Below the budget the
-- row waits until now() + $4 ms (the jittered backoff); at the budget it dies.
UPDATE stampede.outbox o
   SET state = CASE WHEN o.attempts >= o.max_attempts THEN 'dead' ELSE 'pending' END::stampede.outbox_state,
       dead_at = CASE WHEN o.attempts >= o.max_attempts THEN now() END,
       run_at = now() + make_interval(secs => $4::float8 / 1000),
       last_error = $3,
       errors = o.errors || jsonb_build_array(jsonb_build_object('attempt', o.attempts, 'at', now(), 'error', $3::text)),
       lease_token = NULL, lease_owner = NULL
 WHERE o.id = $1 AND o.lease_token = $2 AND o.state = 'pending'
RETURNING o.id, o.state, o.attempts, o.run_at;

-- name: OutboxDepth
-- Waiting and dead rows (one topic, or all). Both ride partial indexes; the
-- delivered rows, the bulk of the table, are never counted.
SELECT (SELECT count(*) FROM stampede.outbox WHERE state = 'pending' AND ($1::text IS NULL OR topic = $1))::bigint AS pending,
       (SELECT count(*) FROM stampede.outbox WHERE state = 'dead' AND ($1::text IS NULL OR topic = $1))::bigint AS dead;

-- name: ListOutbox
SELECT id, topic, key, payload, state::text AS state, attempts, max_attempts, run_at, last_error, errors,
       created_at, delivered_at, dead_at
  FROM stampede.outbox
 WHERE state = $1::stampede.outbox_state AND ($2::text IS NULL OR topic = $2)
 ORDER BY id DESC
 LIMIT $3;

-- name: RedriveOutbox
-- An operator sends a dead row again, with a fresh attempt budget; its error
-- history stays.
UPDATE stampede.outbox
   SET state = 'pending', attempts = 0, run_at = now(), dead_at = NULL, lease_token = NULL, lease_owner = NULL
 WHERE id = $1 AND state = 'dead'
RETURNING id;
