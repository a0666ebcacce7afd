import type { Queryable } from './db.ts';
import { loadQueries } from './sql.ts';
import { validateInt, validateQueueName } from './validate.ts';

const q = loadQueries(new URL('./dead-letters.sql', import.meta.url), [
  'DeadLetterDepth',
  'ListDeadLetters',
] as const);

/**
 * Why a job died, as stampede.dead_letters.code holds it (its CHECK lists the
 * same set; migration 0018 says which path writes which):
 * - `attempts_exhausted`: the handler threw on the last attempt of its budget;
 * - `timeout`: the last attempt of its budget ran past its timeout;
 * - `lease_expired`: the last attempt of its budget lost its lease (its worker died or stalled);
 * - `crash_loop`: the rescuer convicted it of crashing its worker `maxCrashes` times (a poison pill);
 * - `operator`: dead-lettered by hand (deadLetterJob, `control dead-letter`, the dashboard).
 */
export const DEAD_LETTER_CODES = ['attempts_exhausted', 'timeout', 'lease_expired', 'crash_loop', 'operator'] as const;
export type DeadLetterCode = (typeof DEAD_LETTER_CODES)[number];

export interface DeadLetter {
  jobId: number;
  queue: string;
  payload: unknown;
  attempts: number;
  /** Why it died, as a code (DEAD_LETTER_CODES). */
  code: DeadLetterCode;
  /** Why it died, in words: "attempts exhausted: <last error>", "crashed its worker N times", "dead-lettered by <by>: <why>". */
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
    code: r.code,
    reason: r.reason,
    errors: r.errors,
    diedAt: r.died_at,
  }));
}
