import { backoffCeilingMs } from '../worker/backoff.ts';

export interface RestartPolicy {
  /** Delay before the first restart of a crashed process. */
  baseMs: number;
  /** Largest delay. */
  capMs: number;
  /** A process that ran at least this long before dying counts as healthy: the delay starts over. */
  stableMs: number;
}

/**
 * How long to wait before restarting a process that just died, and the
 * consecutive-crash count to carry. Exponential, so a crash loop (a poison
 * job that kills every worker that claims it) slows down instead of turning
 * into a fork bomb; reset after a stable run, so one crash a day costs the
 * base delay only.
 */
export function restartDecision(
  consecutiveCrashes: number,
  uptimeMs: number,
  policy: RestartPolicy,
): { crashes: number; delayMs: number } {
  const crashes = uptimeMs >= policy.stableMs ? 1 : consecutiveCrashes + 1;
  return { crashes, delayMs: backoffCeilingMs(crashes, policy) };
}
