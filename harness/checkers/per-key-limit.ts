import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf } from '../history.ts';
import { firstN, fmt, maxOf, type CheckerDef } from './types.ts';

export interface PerKeyLimitBounds {
  /** The queue's maxInFlightPerKey: no key may have more of its jobs at the downstream at once. */
  maxInFlightPerKey: number;
}

/**
 * No tenant has more jobs in flight at once than its queue's per-key cap
 * (maxInFlightPerKey). Judged from the downstream's own count of open calls
 * per key (harness/runner/downstream.ts), as downstream-in-flight judges the
 * global limit: one process's view, no clocks compared, and a killed caller's
 * call closes with its connection. A call is made only while its job is
 * claimed, so a count above the cap is a cap broken. Inconclusive when no
 * keyed call was made or no key ever reached its cap: a cap the load never
 * pressed proves nothing.
 */
export function checkPerKeyLimit(history: readonly HistoryEvent[], _final: FinalState, bounds: PerKeyLimitBounds): InvariantResult {
  const calls = eventsOf(history, 'downstream:call').filter((c) => c.key !== undefined && c.keyInFlight !== undefined);
  const peak = maxOf(calls.map((c) => c.keyInFlight!));
  const over = calls.filter((c) => c.keyInFlight! > bounds.maxInFlightPerKey);
  const atCap = calls.filter((c) => c.keyInFlight! >= bounds.maxInFlightPerKey).length;
  const keys = new Set(calls.map((c) => c.key)).size;
  return {
    name: 'per-key-limit',
    pass: over.length > 0 ? false : calls.length === 0 || peak < bounds.maxInFlightPerKey ? 'unknown' : true,
    figure: calls.length
      ? `peak ${fmt(peak)} calls of one key at once over ${fmt(calls.length)} keyed calls of ${fmt(keys)} keys; ${fmt(over.length)} above the cap`
      : 'no keyed downstream calls',
    bound: `at most ${fmt(bounds.maxInFlightPerKey)} of one key at once, and the load reaches it`,
    judged: { n: atCap, what: 'keyed calls made at or over the cap' },
    ...(over.length ? { examples: firstN(over).map((c) => ({ jobId: c.jobId, key: c.key, keyInFlight: c.keyInFlight, t: c.t })) } : {}),
  };
}

export const perKeyLimit: CheckerDef<PerKeyLimitBounds> = {
  name: 'per-key-limit',
  says: "no tenant (fairnessKey) has more jobs in flight at once than its queue's maxInFlightPerKey",
  check: checkPerKeyLimit,
  bounds: { maxInFlightPerKey: 'number' },
  defaults: { maxInFlightPerKey: 1 },
};
