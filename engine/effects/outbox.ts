import type { Queryable } from '../db.ts';
import { DEFAULTS } from '../defaults.ts';
import { ValidationError } from '../errors.ts';
import { loadQueries } from '../sql.ts';
import { serializePayload, validateInt, validateKey, validateQueueName } from '../validate.ts';

export const outboxQueries = loadQueries(new URL('./outbox.sql', import.meta.url), [
  'RecordIntent',
  'FindIntentByKey',
  'ClaimIntents',
  'MarkDelivered',
  'FailDelivery',
  'OutboxDepth',
  'ListOutbox',
  'RedriveOutbox',
] as const);
const q = outboxQueries;

/** Attempts a relay makes before an outbox row is dead, unless recordIntent says otherwise. */
export const DEFAULT_OUTBOX_MAX_ATTEMPTS = 8;

export interface Intent {
  /** What kind of effect, e.g. "email" or "payment"; a relay can be limited to some topics. Same charset as queue names. */
  topic: string;
  /**
   * The receiver's idempotency key. Give one derived from your domain
   * ("invoice:42:email") when you have it; by default the database draws a
   * random one, which is stable because effectOnce inserts the row only once.
   */
  key?: string;
  /** JSON payload handed to the relay's deliver function. */
  payload: unknown;
  /** Deliveries before the row is dead. Default 8. */
  maxAttempts?: number;
  /** Deliver no earlier than this many ms after the database's now(). Default 0. */
  delayMs?: number;
}

export interface RecordedIntent {
  id: number;
  key: string;
  /** False when the key was already in the outbox; nothing new was written. */
  inserted: boolean;
}

/** An outbox row as the relay hands it to deliver(). */
export interface OutboxRow<P = unknown> {
  id: number;
  topic: string;
  key: string;
  payload: P;
  /** 1 for the first delivery; charged at claim. */
  attempts: number;
  maxAttempts: number;
  createdAt: Date;
}

export type OutboxState = 'pending' | 'delivered' | 'dead';

export interface OutboxEntry extends OutboxRow {
  state: OutboxState;
  runAt: Date;
  lastError: string | null;
  errors: { attempt: number; at: string; error: string }[];
  deliveredAt: Date | null;
  deadAt: Date | null;
}

/**
 * Records an effect outside Postgres (an email, a payment call) for the relay
 * to deliver. Call it with the transaction effectOnce hands you: the intent
 * then commits if and only if the job's effect and completion commit, and a
 * redelivered job (whose effectOnce is skipped) never records it twice.
 * Validates before writing; throws ValidationError naming the field.
 */
export async function recordIntent(tx: Queryable, intent: Intent): Promise<RecordedIntent> {
  if (intent === null || typeof intent !== 'object') throw new ValidationError('intent', 'expected {topic, key?, payload}');
  const topic = validateQueueName(intent.topic, 'intent.topic');
  const key = intent.key === undefined ? null : validateKey(intent.key, 'intent.key');
  const payload = serializePayload(intent.payload, DEFAULTS.maxPayloadBytes, 'intent.payload');
  const maxAttempts = intent.maxAttempts === undefined ? DEFAULT_OUTBOX_MAX_ATTEMPTS : validateInt(intent.maxAttempts, 'intent.maxAttempts', 1, 1000);
  const delayMs = intent.delayMs === undefined ? 0 : validateInt(intent.delayMs, 'intent.delayMs', 0);
  const res = await tx.query(q.RecordIntent, [topic, key, payload, maxAttempts, delayMs]);
  if (res.rows[0]) return { id: res.rows[0].id, key: res.rows[0].key, inserted: true };
  const found = await tx.query(q.FindIntentByKey, [key]);
  if (!found.rows[0]) throw new Error(`outbox key ${key} neither inserted nor found`);
  return { id: found.rows[0].id, key: found.rows[0].key, inserted: false };
}

/** Rows waiting for delivery and rows dead (one topic, or all). A growing dead count means a receiver is broken. */
export async function outboxDepth(db: Queryable, topic?: string): Promise<{ pending: number; dead: number }> {
  const res = await db.query(q.OutboxDepth, [topic === undefined ? null : validateQueueName(topic, 'topic')]);
  return { pending: res.rows[0].pending, dead: res.rows[0].dead };
}

const STATES: readonly OutboxState[] = ['pending', 'delivered', 'dead'];

/** Outbox rows in one state, newest first. `listOutbox(db, {state: 'dead'})` is the dead-letter view of the outbox. */
export async function listOutbox(db: Queryable, options: { state: OutboxState; topic?: string; limit?: number }): Promise<OutboxEntry[]> {
  if (!STATES.includes(options?.state)) throw new ValidationError('state', `${String(options?.state)} is not one of ${STATES.join(', ')}`);
  const topic = options.topic === undefined ? null : validateQueueName(options.topic, 'topic');
  const limit = options.limit === undefined ? 100 : validateInt(options.limit, 'limit', 1, 100_000);
  const res = await db.query(q.ListOutbox, [options.state, topic, limit]);
  return res.rows.map((r) => ({
    id: r.id,
    topic: r.topic,
    key: r.key,
    payload: r.payload,
    state: r.state,
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    runAt: r.run_at,
    lastError: r.last_error,
    errors: r.errors,
    createdAt: r.created_at,
    deliveredAt: r.delivered_at,
    deadAt: r.dead_at,
  }));
}

/** Moves a dead outbox row back to pending with a fresh budget. Returns false when it is not dead. */
export async function redriveOutbox(db: Queryable, id: number): Promise<boolean> {
  const res = await db.query(q.RedriveOutbox, [validateInt(id, 'id', 1)]);
  return (res.rowCount ?? 0) > 0;
}
