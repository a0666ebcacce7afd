/**
 * Constant arrival rate (k6's `constant-arrival-rate`): one offer every
 * 1000 / rate ms, from 0 up to (not including) the duration. Computed as
 * i * interval rather than by adding, so no rounding drift over long runs.
 * It draws nothing random; the Rng is taken only to share the plan signature.
 */
export function* constantTimes(ratePerS: number, durationMs: number): Generator<number> {
  const intervalMs = 1000 / ratePerS;
  for (let i = 0; ; i++) {
    const t = i * intervalMs;
    if (t >= durationMs) return;
    yield t;
  }
}
