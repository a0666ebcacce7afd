import type { Queryable } from '../db.ts';
import { jobFromRow, type Job } from '../job.ts';
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
  /** The database's now() at the claim: the instant the lease started. */
  dbClaimedAt: Date;
}

const toClaimed = (r: any): ClaimedJob => ({ ...jobFromRow(r), leaseToken: r.lease_token, dbClaimedAt: r.db_now });

/** Claims up to `limit` due jobs in one statement (see ClaimJobs in worker.sql for why it is shaped so). */
export async function claimJobs(db: Queryable, r: ClaimRequest): Promise<ClaimedJob[]> {
  if (r.limit <= 0) return [];
  const res = await db.query(q.ClaimJobs, [r.queues, r.limit, r.workerId, r.leaseMs, r.agingMs]);
  return res.rows.map(toClaimed);
}

/** How long the oldest due suspect (a job that was in flight when a worker died) has waited, ms; null when none. */
export async function oldestSuspectWaitMs(db: Queryable, queues: string[]): Promise<number | null> {
  const ms = (await db.query(q.SuspectsWaiting, [queues])).rows[0].oldest_wait_ms;
  return ms === null ? null : Number(ms);
}

/** Claims one suspect, to be run alone. */
export async function claimSuspect(db: Queryable, r: Omit<ClaimRequest, 'limit' | 'agingMs'>): Promise<ClaimedJob | undefined> {
  const res = await db.query(q.ClaimSuspect, [r.queues, r.workerId, r.leaseMs]);
  return res.rows.map(toClaimed)[0];
}
