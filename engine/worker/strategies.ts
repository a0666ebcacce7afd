import { retryDelayMs, type BackoffPolicy } from './backoff.ts';
import { effectInTransaction } from './effect-once.ts';
import type { Clock } from '../clock.ts';
import type { Rng } from '../rng.ts';
import { dbErrorKind, type DbErrorKind } from '../errors.ts';
import type { Queryable } from '../db.ts';
import type { QueryResult } from 'pg';
import { workerQueries } from './queries.ts';
import { claimAheadFor, type AheadInputs } from './claim-ahead.ts';

/**
 * INTERNAL. The strategies a job run calls through, gathered in one object so
 * that the harness can swap one for a deliberately broken variant (its
 * negative controls, harness/mutants/) without a switch in production code.
 * Not exported from engine/index.ts and not reachable through WorkerOptions
 * or any CLI flag: nothing but harness/mutants/apply.ts ever assigns to it,
 * and production runs these defaults.
 */
export interface WorkerStrategies {
  /** The delay before retrying failed attempt `attempt` (1-based), ms. */
  retryDelayMs: (attempt: number, policy: BackoffPolicy, rng: Rng) => number;
  /** ctx.effectOnce's implementation. */
  effectOnce: typeof effectInTransaction;
  /**
   * A handler's time limit: resolves once `timeoutMs` has passed on the worker's clock (the run then aborts the
   * handler with JobTimeoutError), rejects when `disarm` aborts (the handler settled first).
   */
  handlerTimeout: (clock: Clock, timeoutMs: number, disarm: AbortSignal) => Promise<void>;
  /**
   * At stop, the jobs claimed ahead that never got a slot: which go back uncharged and which (none: a
   * stopping worker starts nothing new) would start.
   */
  claimedAheadAtStop: <T>(waiting: T[]) => { handBack: T[]; start: T[] };
  /** When a job's lease starts being renewed: from its claim, so a job claimed ahead keeps its lease while it waits for a slot. */
  leaseRenewedFrom: 'claim' | 'start';
  /**
   * The database's kind of trouble an effect's transaction failed with (read-only, out of slots, the connection
   * lost), or undefined when the failure was the job's own: the job is then handed back uncharged, not failed.
   */
  databaseFault: (err: unknown) => DbErrorKind | undefined;
  /**
   * Node-clock ms after which a run whose lease was last written by a statement sent at `sentAt` and answered at
   * `answeredAt` may have lost it: the database set the expiry to its own now() + leaseMs when it ran that statement,
   * which was after it was sent and may have been long before the answer arrived (a slow link, a loaded host), so
   * the count starts at the send and the answer's time is not used.
   */
  leaseMayEndAt: (sentAt: number, leaseMs: number, answeredAt: number) => number;
  /** Hands back, uncharged and due at once, a claim whose run gave its lease up (JobRun.handBackExpired); fenced on the token: no row when it was taken over. */
  releaseExpired: (db: Queryable, jobId: number, leaseToken: string) => Promise<QueryResult>;
  /** The claim-ahead buffer's size for the next claim when `claimAhead` was left unset (claim-ahead.ts). */
  claimAheadFor: (inputs: AheadInputs) => number;
  /** Whether a worker built with these options starts a lease rescuer of its own (WorkerOptions.rescue, on by default). */
  runsRescuer: (options: { rescue?: boolean }) => boolean;
  /** How many more handlers may start now, with `running` of the worker's `concurrency` slots running one (Worker.fillSlots). */
  freeSlots: (running: number, concurrency: number) => number;
}

/**
 * How much before a lease may have ended a worker that heard no renewal gives it up: the heartbeat loop's timer
 * fires late under load, and the abort must still come before the database's expiry (a tenth of a short lease).
 */
const LEASE_END_MARGIN_MS = 100;

export const workerStrategies: WorkerStrategies = {
  retryDelayMs,
  effectOnce: effectInTransaction,
  handlerTimeout: (clock, timeoutMs, disarm) => clock.sleep(timeoutMs, disarm),
  claimedAheadAtStop: (waiting) => ({ handBack: waiting, start: [] }),
  leaseRenewedFrom: 'claim',
  databaseFault: dbErrorKind,
  leaseMayEndAt: (sentAt, leaseMs) => sentAt + leaseMs - Math.min(LEASE_END_MARGIN_MS, leaseMs / 10),
  releaseExpired: (db, jobId, leaseToken) => db.query(workerQueries.DeferJob, [jobId, leaseToken, 0]),
  claimAheadFor,
  runsRescuer: (options) => options.rescue ?? true,
  freeSlots: (running, concurrency) => concurrency - running,
};
