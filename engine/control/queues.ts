import type pg from 'pg';
import type { Db, Queryable } from '../db.ts';
import { ValidationError } from '../errors.ts';
import { validateInt, validateKey, validateQueueName } from '../validate.ts';
import { validateActor, writeAudit, type Actor } from './audit.ts';
import { QueueStateError, UnknownQueueError } from './errors.ts';
import { controlQueries as q } from './queries.ts';

/** A queue's operating state, as stored in stampede.queue_settings. */
export interface QueueControl {
  queue: string;
  paused: boolean;
  /** When the pause took effect (database clock); null when running. */
  pausedAt: Date | null;
  pausedBy: string | null;
  pausedReason: string | null;
  /** Most jobs of this queue claimed at once across all workers; null: no limit. */
  maxInFlight: number | null;
  /** Most starts per second across all workers (burst: one second's worth, at least 1); null: no limit. */
  maxStartsPerSecond: number | null;
  /** Most jobs of one fairnessKey claimed at once across all workers; null: the queue is not fair (keys are only stored). */
  maxInFlightPerKey: number | null;
  /** Each fairnessKey's jobs run one at a time in enqueue order. */
  sequential: boolean;
  maxAttempts: number | null;
}

export interface QueueLimits {
  /** Jobs in flight at once, across all workers, integer >= 1; null removes the limit. */
  maxInFlight: number | null;
  /** Starts per second, across all workers, > 0; null removes the limit. */
  maxStartsPerSecond: number | null;
  /**
   * Jobs of one fairnessKey in flight at once, across all workers, integer >= 1; null removes it.
   * Setting it also shares the queue's claims across keys by weight (setKeyWeight). Omitted: unchanged.
   */
  maxInFlightPerKey?: number | null;
  /**
   * Each fairnessKey's jobs run strictly one at a time in enqueue order, across workers and crashes:
   * a key's next job starts only once the one before it is done, dead or cancelled. The queue is then
   * fair with a cap of 1 per key. Omitted: unchanged.
   */
  sequential?: boolean;
}

const toControl = (r: any): QueueControl => ({
  queue: r.queue,
  paused: r.paused,
  pausedAt: r.paused_at,
  pausedBy: r.paused_by,
  pausedReason: r.paused_reason,
  maxInFlight: r.max_in_flight,
  maxStartsPerSecond: r.max_starts_per_second,
  maxInFlightPerKey: r.max_in_flight_per_key,
  sequential: r.sequential,
  maxAttempts: r.max_attempts,
});

/**
 * One queue verb in one transaction: validate, take the queue's lock (which
 * orders the change against every claim of the queue), refuse an unknown
 * queue unless allowNew, apply, audit.
 */
async function actOnQueue<T>(
  db: Db,
  verb: string,
  queue: string,
  actor: Actor,
  allowNew: boolean,
  apply: (tx: pg.PoolClient, name: string, who: Actor) => Promise<{ result: T; detail: Record<string, unknown> }>,
): Promise<T> {
  const name = validateQueueName(queue);
  const who = validateActor(actor);
  return db.transaction(async (tx) => {
    await tx.query(q.LockQueue, [name]);
    if (!allowNew && !(await tx.query(q.KnownQueue, [name])).rows[0].known) throw new UnknownQueueError(verb, name);
    const { result, detail } = await apply(tx, name, who);
    await writeAudit(tx, who, { verb, queue: name, detail });
    return result;
  });
}

/**
 * Pauses a queue: no worker claims from it until resumeQueue. Jobs in flight
 * finish; enqueues go on; depth and oldest age keep being reported, with
 * `paused` beside them. When it returns, every claim that could have missed
 * the pause has committed, so nothing of this queue starts after it. Refuses
 * a paused queue (QueueStateError, saying who paused it) and an unknown one.
 * Returns when the pause took effect (database clock).
 */
export function pauseQueue(db: Db, queue: string, actor: Actor & { allowNew?: boolean }): Promise<{ pausedAt: Date }> {
  return actOnQueue(db, 'pause', queue, actor, actor.allowNew ?? false, async (tx, name, who) => {
    const row = (await tx.query(q.PauseQueue, [name, who.by, who.reason])).rows[0];
    if (!row) {
      const c = toControl((await tx.query(q.GetQueueControl, [name])).rows[0]);
      throw new QueueStateError('pause', name, `already paused since ${c.pausedAt?.toISOString()} by ${c.pausedBy}: ${c.pausedReason}`);
    }
    return { result: { pausedAt: row.paused_at as Date }, detail: {} };
  });
}

/** Resumes a paused queue. Refuses one that is not paused. Returns when claims could start again (database clock). */
export function resumeQueue(db: Db, queue: string, actor: Actor): Promise<{ resumedAt: Date }> {
  return actOnQueue(db, 'resume', queue, actor, false, async (tx, name) => {
    const before = (await tx.query(q.GetQueueControl, [name])).rows[0];
    const row = (await tx.query(q.ResumeQueue, [name])).rows[0];
    if (!row) throw new QueueStateError('resume', name, 'it is not paused');
    return {
      result: { resumedAt: row.resumed_at as Date },
      detail: { pausedAt: before.paused_at, pausedBy: before.paused_by, pausedReason: before.paused_reason },
    };
  });
}

function validateCount(name: string, value: number | null): void {
  if (value !== null && (!Number.isInteger(value) || value < 1 || value > 1_000_000)) {
    throw new ValidationError(name, `${String(value)} is not an integer in [1, 1000000]; null removes the limit`);
  }
}

function validateLimits(limits: QueueLimits): QueueLimits {
  const { maxInFlight, maxStartsPerSecond, maxInFlightPerKey, sequential } = limits;
  validateCount('maxInFlight', maxInFlight);
  if (maxInFlightPerKey !== undefined) validateCount('maxInFlightPerKey', maxInFlightPerKey);
  if (sequential !== undefined && typeof sequential !== 'boolean') throw new ValidationError('sequential', `${String(sequential)} is not true or false`);
  if (maxStartsPerSecond !== null && (typeof maxStartsPerSecond !== 'number' || !(maxStartsPerSecond > 0) || maxStartsPerSecond > 1_000_000)) {
    throw new ValidationError('maxStartsPerSecond', `${String(maxStartsPerSecond)} is not a number in (0, 1000000]; null removes the limit`);
  }
  return {
    maxInFlight,
    maxStartsPerSecond,
    ...(maxInFlightPerKey === undefined ? {} : { maxInFlightPerKey }),
    ...(sequential === undefined ? {} : { sequential }),
  };
}

/**
 * Sets (or, with null, removes) a queue's global limits, enforced by the
 * claim across all workers (see stampede.claim_gate in
 * migrations/0010_control.sql). Takes effect for the next claim; jobs already
 * in flight above a lowered limit finish. Returns the queue's settings.
 */
export async function setQueueLimits(db: Db, queue: string, limits: QueueLimits, actor: Actor & { allowNew?: boolean }): Promise<QueueControl> {
  const next = validateLimits({ ...limits, maxInFlight: limits.maxInFlight ?? null, maxStartsPerSecond: limits.maxStartsPerSecond ?? null });
  return actOnQueue(db, 'set-limits', queue, actor, actor.allowNew ?? false, async (tx, name) => {
    const before = (await tx.query(q.GetQueueControl, [name])).rows[0];
    const perKeyGiven = next.maxInFlightPerKey !== undefined;
    await tx.query(q.SetQueueLimits, [name, next.maxInFlight, next.maxStartsPerSecond, next.maxInFlightPerKey ?? null, perKeyGiven, next.sequential ?? null]);
    const after = toControl((await tx.query(q.GetQueueControl, [name])).rows[0]);
    return {
      result: after,
      detail: {
        before: {
          maxInFlight: before?.max_in_flight ?? null,
          maxStartsPerSecond: before?.max_starts_per_second ?? null,
          ...(perKeyGiven ? { maxInFlightPerKey: before?.max_in_flight_per_key ?? null } : {}),
          ...(next.sequential === undefined ? {} : { sequential: before?.sequential ?? false }),
        },
        after: next,
      },
    };
  });
}

/**
 * Sets (or, with null, removes) `key`'s weight in the fair share of `queue`
 * (one with maxInFlightPerKey): each turn of the claim's walk over the keys
 * offers up to `weight` of the key's jobs, so a key of weight 3 starts about
 * three jobs for every one of a key of weight 1 while both have jobs due.
 * Keys without a weight weigh 1. Integer in [1, 1000]. Audited.
 */
export async function setKeyWeight(db: Db, queue: string, key: string, weight: number | null, actor: Actor & { allowNew?: boolean }): Promise<void> {
  const k = validateKey(key, 'key');
  const w = weight === null ? null : validateInt(weight, 'weight', 1, 1000);
  await actOnQueue(db, 'set-key-weight', queue, actor, actor.allowNew ?? false, async (tx, name) => {
    const before = (await tx.query(q.GetKeyWeight, [name, k])).rows[0]?.weight ?? null;
    await tx.query(q.SetKeyWeight, [name, k, w]);
    return { result: undefined, detail: { key: k, before, after: w } };
  });
}

/** A key's weight in its queue's fair share (setKeyWeight). */
export interface KeyWeight {
  key: string;
  weight: number;
}

/** The keys of `queue` that have a weight, heaviest first (keys without one weigh 1). */
export async function listKeyWeights(db: Queryable, queue: string): Promise<KeyWeight[]> {
  return (await db.query(q.ListKeyWeights, [validateQueueName(queue)])).rows.map((r) => ({ key: r.key, weight: r.weight }));
}

/** One queue's operating state; null when the queue has no settings row (running, unlimited). */
export async function getQueueControl(db: Queryable, queue: string): Promise<QueueControl | null> {
  const row = (await db.query(q.GetQueueControl, [validateQueueName(queue)])).rows[0];
  return row ? toControl(row) : null;
}

/** Every queue that has settings (paused, limited, or a max_attempts), by name. */
export async function listQueueControls(db: Queryable): Promise<QueueControl[]> {
  return (await db.query(q.ListQueueControls)).rows.map(toControl);
}
