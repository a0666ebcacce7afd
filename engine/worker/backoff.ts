import type { Rng } from '../rng.ts';

export interface BackoffPolicy {
  /** Ceiling of the first retry, ms. */
  baseMs: number;
  /** Largest ceiling, ms. */
  capMs: number;
}

/** Backoff between retries of a database call that failed for want of a connection (reconnects, passes of a loop). */
export const RECONNECT_BACKOFF: BackoffPolicy = { baseMs: 100, capMs: 5_000 };

/** The ceiling for the retry after failed attempt `attempt` (1-based): min(cap, base * 2^(attempt-1)). */
export function backoffCeilingMs(attempt: number, policy: BackoffPolicy): number {
  const exp = policy.baseMs * 2 ** Math.max(0, attempt - 1);
  return Math.min(policy.capMs, exp);
}

/**
 * Full jitter: sleep = random(0, ceiling). Retries from jobs that failed
 * together spread over the whole window instead of firing on one tick, so
 * they do not re-saturate the dependency that just failed.
 */
export function retryDelayMs(attempt: number, policy: BackoffPolicy, rng: Rng): number {
  return Math.floor(rng.next() * backoffCeilingMs(attempt, policy));
}
