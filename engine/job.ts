/** The states of a job row; see migrations/0001_jobs.sql for what each means. */
export type JobState = 'pending' | 'claimed' | 'done' | 'failed' | 'dead' | 'cancelled';

/** A job row as the engine reads it. Times are Dates from the database clock. */
export interface Job<P = unknown> {
  id: number;
  queue: string;
  priority: number;
  state: JobState;
  runAt: Date;
  attempts: number;
  maxAttempts: number;
  crashCount: number;
  payload: P;
  idempotencyKey: string | null;
  /** The tenant key given at enqueue (fairnessKey), or null. */
  fairnessKey: string | null;
  /** The W3C traceparent of the work that enqueued it (engine/tracing.ts), or null. */
  traceparent: string | null;
  leaseOwner: string | null;
  leaseToken: string | null;
  leaseExpiresAt: Date | null;
  lastError: string | null;
  createdAt: Date;
}

export function jobFromRow(r: any): Job {
  return {
    id: r.id,
    queue: r.queue,
    priority: r.priority,
    state: r.state,
    runAt: r.run_at,
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    crashCount: r.crash_count,
    payload: r.payload,
    idempotencyKey: r.idempotency_key,
    fairnessKey: r.fairness_key ?? null,
    traceparent: r.trace_parent ?? null,
    leaseOwner: r.lease_owner,
    leaseToken: r.lease_token,
    leaseExpiresAt: r.lease_expires_at,
    lastError: r.last_error,
    createdAt: r.created_at,
  };
}

/**
 * The key that makes a job's effect happen once: the caller's idempotency key
 * when one was given at enqueue (a cron occurrence's key is one), else one
 * derived from the job's id, which is stable across every redelivery.
 */
export function effectKey(job: Pick<Job, 'id' | 'idempotencyKey'>): string {
  return job.idempotencyKey ?? `job:${job.id}`;
}
