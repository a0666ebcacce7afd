import type pg from 'pg';
import type { Db } from './db.ts';
import type { Job } from './job.ts';

/** What a handler gets besides its payload. */
export interface JobContext<P = unknown> {
  job: Job<P>;
  /** 1 for the first attempt. Attempts are charged at claim, so a crash still uses one up. */
  attempt: number;
  workerId: string;
  /**
   * Aborted when the worker no longer owns the job (a heartbeat found the lease
   * gone), when the job timeout passes, or when shutdown's grace period ends.
   * Long handlers should pass it on to their I/O.
   */
  signal: AbortSignal;
  /**
   * The safe path to an effect that happens once. Runs `fn` in one transaction
   * together with the dedup record for this job's effect key and the job's
   * completion, fenced on this worker's lease. If the key is already recorded
   * (a replay), `fn` is skipped and the job completes as a no-op; if the lease
   * was lost, everything rolls back and `fn`'s writes never happened.
   * Call it once per job: the job completes in that transaction.
   */
  effectOnce<T>(fn: (tx: pg.PoolClient) => Promise<T>): Promise<{ applied: boolean; result?: T }>;
  /**
   * The unsafe path, named so: the pool, outside any transaction stampede
   * controls. Writes made here can happen twice when a job is redelivered.
   */
  unsafeDb: Db;
}

/** A job handler: resolve to complete the job, throw (anything) to fail this attempt. */
export type Handler<P = any> = (payload: P, ctx: JobContext<P>) => unknown | Promise<unknown>;

/** Handlers by queue name. A worker claims only from queues it has a handler for. */
export type Handlers = Record<string, Handler>;
