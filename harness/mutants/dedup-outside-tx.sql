-- name: EffectKeyExists
-- The dedup-outside-tx mutant looks the key up outside the effect's transaction.
SELECT 1 FROM stampede.effect_keys WHERE key = $1;
