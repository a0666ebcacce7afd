import { prepared, type Queryable } from '../db.ts';
import type { Job } from '../job.ts';
import { workerQueries as q } from './queries.ts';

export interface ClaimRequest {
  queues: string[];
  /** Lease per queue, ms, aligned with `queues`. */
  leaseMs: number[];
  limit: number;
  workerId: string;
  agingMs: number;
}

export interface ClaimedJob extends Job {
  leaseToken: string;
  /** The database's now() at the claim: the instant the lease started (the claim statement's start). */
  dbClaimedAt: Date;
  /**
   * The database's clock when the claim took the row: after the claim's queue locks and its fresh look at the
   * queue's limits and key heads, so later than anything the claim's choice depended on. dbTakenAt - dbClaimedAt
   * is how long the claim waited on other claims of a limited queue.
   */
  dbTakenAt: Date;
}

/** A claimed row (ClaimJobs' RETURNING: times as epoch ms, state and owner known) as a job, in one object. */
function toClaimed(r: any, workerId: string): ClaimedJob {
  return {
    id: r.id,
    queue: r.queue,
    priority: r.priority,
    state: 'claimed',
    runAt: new Date(r.run_at_ms),
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    crashCount: r.crash_count,
    payload: r.payload,
    idempotencyKey: r.idempotency_key,
    fairnessKey: r.fairness_key,
    traceparent: r.trace_parent,
    leaseOwner: workerId,
    leaseToken: r.lease_token,
    leaseExpiresAt: new Date(r.lease_expires_at_ms),
    lastError: r.last_error,
    createdAt: new Date(r.created_at_ms),
    dbClaimedAt: new Date(r.db_now_ms),
    dbTakenAt: new Date(r.db_taken_ms),
  };
}

/** Claims up to `limit` due jobs in one statement (see ClaimJobs in worker.sql for why it is shaped so). */
export async function claimJobs(db: Queryable, r: ClaimRequest): Promise<ClaimedJob[]> {
  if (r.limit <= 0) return [];
  const res = await db.query(prepared(q.ClaimJobs, [r.queues, r.limit, r.workerId, r.leaseMs, r.agingMs]));
  return res.rows.map((row) => toClaimed(row, r.workerId));
}

/** How long the oldest due suspect (a job that was in flight when a worker died) has waited, ms; null when none. */
export async function oldestSuspectWaitMs(db: Queryable, queues: string[]): Promise<number | null> {
  const ms = (await db.query(q.SuspectsWaiting, [queues])).rows[0].oldest_wait_ms;
  return ms === null ? null : Number(ms);
}

/** Claims one suspect, to be run alone. */
export async function claimSuspect(db: Queryable, r: Omit<ClaimRequest, 'limit' | 'agingMs'>): Promise<ClaimedJob | undefined> {
  const res = await db.query(q.ClaimSuspect, [r.queues, r.workerId, r.leaseMs]);
  const row = res.rows[0];
  return row && toClaimed(row, r.workerId);
}
