import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf } from '../history.ts';
import { firstN, fmt, maxOf, type CheckerDef } from './types.ts';

export interface DownstreamInFlightBounds {
  /** The queue's global in-flight limit: the downstream must never see more calls at once. */
  maxInFlight: number;
}

/**
 * The downstream never sees more calls at once than the queue's limit. The
 * count is the downstream's own (harness/runner/downstream.ts counts requests
 * open at its end, a caller that died closing its request), recorded with each
 * call, so no clocks of different processes are compared. Inconclusive when
 * no call was made or the calls never reached the limit: a limit the load
 * never pressed proves nothing.
 */
export function checkDownstreamInFlight(history: readonly HistoryEvent[], _final: FinalState, bounds: DownstreamInFlightBounds): InvariantResult {
  const calls = eventsOf(history, 'downstream:call');
  const peak = maxOf(calls.map((c) => c.inFlight));
  const over = calls.filter((c) => c.inFlight > bounds.maxInFlight);
  const overloaded = calls.filter((c) => c.overloaded).length;
  const capacity = calls[0]?.capacity;
  // Only a call made at the limit could have gone over it: a limit the load never pressed proves nothing.
  const atLimit = calls.filter((c) => c.inFlight >= bounds.maxInFlight).length;
  const figure = calls.length
    ? `peak ${fmt(peak)} calls at once over ${fmt(calls.length)} calls; ${fmt(over.length)} above the limit, ${fmt(overloaded)} refused as overload (capacity ${fmt(capacity ?? 0)})`
    : 'no downstream calls';
  return {
    name: 'downstream-in-flight',
    pass: over.length > 0 ? false : calls.length === 0 || peak < bounds.maxInFlight ? 'unknown' : true,
    figure,
    bound: `at most ${fmt(bounds.maxInFlight)} at once, and the load reaches it`,
    judged: { n: atLimit, what: 'calls at or over the limit' },
    ...(over.length ? { examples: firstN(over).map((c) => ({ jobId: c.jobId, attempt: c.attempt, inFlight: c.inFlight, t: c.t })) } : {}),
  };
}

export const downstreamInFlight: CheckerDef<DownstreamInFlightBounds> = {
  name: 'downstream-in-flight',
  says: "the downstream never sees more calls at once than the queue's global in-flight limit",
  check: checkDownstreamInFlight,
  bounds: { maxInFlight: 'number' },
  defaults: { maxInFlight: 1 },
};
