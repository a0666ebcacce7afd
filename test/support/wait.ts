import { systemClock } from '../../engine/clock.ts';

/**
 * Polls `check` until it returns a truthy value, then returns it. For
 * conditions that live in the database (no event to wait on); fails with
 * `what` after `timeoutMs`, so a hang reads as a clear failure.
 */
export async function until<T>(what: string, check: () => Promise<T> | T, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = systemClock.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (systemClock.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await systemClock.sleep(everyMs);
  }
}
