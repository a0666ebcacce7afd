-- name: PruneEffectKeys
-- Up to $2 dedup keys recorded more than $1 ms before the database's now(),
-- oldest first (rides effect_keys_applied_at_idx). SKIP LOCKED: pruners on
-- several nodes take different batches, and a key that a live effectOnce is
-- checking is left for the next pass.
WITH doomed AS (
  SELECT key FROM stampede.effect_keys
   WHERE applied_at < now() - make_interval(secs => $1::float8 / 1000)
   ORDER BY applied_at
   LIMIT $2
     FOR UPDATE SKIP LOCKED
)
DELETE FROM stampede.effect_keys e USING doomed WHERE e.key = doomed.key;

-- name: PruneDeliveredOutbox
-- Up to $2 outbox rows delivered more than $1 ms ago (rides
-- outbox_delivered_idx). Pending and dead rows are never pruned: they are
-- work not yet done, or waiting for an operator.
WITH doomed AS (
  SELECT id FROM stampede.outbox
   WHERE state = 'delivered' AND delivered_at < now() - make_interval(secs => $1::float8 / 1000)
   ORDER BY delivered_at
   LIMIT $2
     FOR UPDATE SKIP LOCKED
)
DELETE FROM stampede.outbox o USING doomed WHERE o.id = doomed.id;
