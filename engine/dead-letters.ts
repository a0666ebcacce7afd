import type { Queryable } from './db.ts';
import { loadQueries } from './sql.ts';
import { validateInt, validateQueueName } from './validate.ts';

const q = loadQueries(new URL('./dead-letters.sql', import.meta.url), [
  'DeadLetterDepth',
  'ListDeadLetters',
  'RedriveDeadLetter',
] as const);

export interface DeadLetter {
  jobId: number;
  queue: string;
  payload: unknown;
  attempts: number;
  reason: string;
  /** Every failed attempt: {attempt, at, kind, error}. */
  errors: { attempt: number; at: string; kind: string; error: string }[];
  diedAt: Date;
}

/** How many jobs are dead (in one queue, or all). A rising depth means a downstream is broken or a payload malformed. */
export async function deadLetterDepth(db: Queryable, queue?: string): Promise<number> {
  const res = await db.query(q.DeadLetterDepth, [queue === undefined ? null : validateQueueName(queue)]);
  return res.rows[0].depth;
}

/** The newest dead jobs first. */
export async function listDeadLetters(db: Queryable, options: { queue?: string; limit?: number } = {}): Promise<DeadLetter[]> {
  const queue = options.queue === undefined ? null : validateQueueName(options.queue);
  const limit = options.limit === undefined ? 100 : validateInt(options.limit, 'limit', 1, 100_000);
  const res = await db.query(q.ListDeadLetters, [queue, limit]);
  return res.rows.map((r) => ({
    jobId: r.job_id,
    queue: r.queue,
    payload: r.payload,
    attempts: r.attempts,
    reason: r.reason,
    errors: r.errors,
    diedAt: r.died_at,
  }));
}

/** Moves a dead job back to pending with a fresh attempt budget. Returns false when the job is not dead. */
export async function redrive(db: Queryable, jobId: number): Promise<boolean> {
  const res = await db.query(q.RedriveDeadLetter, [validateInt(jobId, 'jobId', 1)]);
  return (res.rowCount ?? 0) > 0;
}
