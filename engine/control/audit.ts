import type { Queryable } from '../db.ts';
import { ValidationError } from '../errors.ts';
import { validateInt, validateQueueName } from '../validate.ts';
import { controlQueries as q } from './queries.ts';

/** Who acts and why: required on every operator action, written to stampede.control_audit. */
export interface Actor {
  /** Who: a person or a tool ("alice", "oncall-bot"). 1-200 characters. */
  by: string;
  /** Why, in words the next person on call understands. 1-2000 characters. */
  reason: string;
}

export interface AuditEntry {
  id: number;
  at: Date;
  actor: string;
  reason: string;
  verb: string;
  queue: string;
  jobId: number | null;
  /** What the action found and did, e.g. {from: 'failed'}. */
  detail: Record<string, unknown>;
}

function text(value: unknown, field: string, max: number): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > max) {
    throw new ValidationError(field, `expected a non-empty string of at most ${max} characters, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Validates who and why; throws ValidationError naming the missing one. */
export function validateActor(actor: Actor | undefined): Actor {
  return { by: text(actor?.by, 'by', 200), reason: text(actor?.reason, 'reason', 2000) };
}

export async function writeAudit(
  db: Queryable,
  actor: Actor,
  entry: { verb: string; queue: string; jobId?: number; detail?: Record<string, unknown> },
): Promise<void> {
  await db.query(q.InsertAudit, [actor.by, actor.reason, entry.verb, entry.queue, entry.jobId ?? null, JSON.stringify(entry.detail ?? {})]);
}

/** Operator actions, newest first: all, one job's, or one queue's. */
export async function listAudit(db: Queryable, options: { jobId?: number; queue?: string; limit?: number } = {}): Promise<AuditEntry[]> {
  const res = await db.query(q.ListAudit, [
    options.jobId === undefined ? null : validateInt(options.jobId, 'jobId', 1),
    options.queue === undefined ? null : validateQueueName(options.queue),
    options.limit === undefined ? 100 : validateInt(options.limit, 'limit', 1, 10_000),
  ]);
  return res.rows.map((r) => ({
    id: r.id,
    at: r.at,
    actor: r.actor,
    reason: r.reason,
    verb: r.verb,
    queue: r.queue,
    jobId: r.job_id,
    detail: r.detail,
  }));
}
