import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { fmt, type CheckerDef } from './types.ts';

export interface StartRateBounds {
  /** The queue with the start-rate limit ('' : none, the check is unknown). The scenario's queueLimits supply it. */
  queue: string;
  /** Its `max_starts_per_second` (0: none). The scenario's queueLimits supply it. */
  perSecond: number;
  /**
   * How much later than its claim's now() a claim may draw its tokens, ms. The bucket is drawn at
   * clock_timestamp() inside stampede.claim_gate, after the claim has waited for the queue's
   * exclusive lock (claims of a limited queue take turns), and a claim's recorded instant is its
   * statement's now(): starts recorded within a window may have drawn up to this much after it.
   * Default 500 (a claim of a limited queue holds the lock for one statement: milliseconds).
   */
  lagMs: number;
}

/**
 * The start-rate limit (docs/operating.md, `max_starts_per_second`): "a fleet
 * of any size never sends more than that". The bucket (migrations/0010_control.sql,
 * stampede.start_tokens and claim_gate) holds at most B = max(1, rate) tokens,
 * starts full, refills at `rate` per second and is drawn in whole tokens by
 * what each claim is allowed (at least one per job it claims), so in any span
 * of T seconds at most B + rate · T jobs of the queue are claimed. Judged on every span between two claims of the queue
 * (their statements' now(), database clock), the later end widened by `lagMs`
 * for the wait before the draw: n claims from t_i to t_j need
 * n <= B + rate · (t_j − t_i + lagMs). Judged: the claims made while the
 * queue started at least half its rate over the second before (the limit
 * pressed); unknown when there was none: a limit the load never pressed
 * proves nothing.
 */
export function checkStartRate(history: readonly HistoryEvent[], _final: FinalState, bounds: StartRateBounds): InvariantResult {
  const name = 'start-rate';
  if (!bounds.queue || !(bounds.perSecond > 0)) {
    return { name, pass: 'unknown', figure: 'no queue with a start-rate limit', bound: 'n/a', judged: { n: 0, what: 'claims of a rate-limited queue' } };
  }
  const rate = bounds.perSecond / 1000; // per ms
  const burst = Math.max(1, bounds.perSecond);
  const times = history.flatMap((e) => (e.type === 'job:claimed' && e.queue === bounds.queue && e.dbTime !== undefined ? [e.dbTime] : [])).sort((a, b) => a - b);
  // The worst span ending at each claim j: max over i <= j of (j - i + 1) - rate * (t_j - t_i), from a running best of rate * t_i - i.
  let best = { value: -Infinity, at: 0 };
  let worst = { excess: -Infinity, count: 0, spanMs: 0 };
  // Claims made while the queue ran at half its limit or more over the second before: where the limit was pressed.
  // (The bucket itself cannot be replayed from the claims: every claim of the queue draws the tokens it was
  // allowed, whether or not it found jobs, so under light load it runs well below its rate.)
  let pressed = 0;
  let from = 0;
  times.forEach((t, j) => {
    if (rate * t - j > best.value) best = { value: rate * t - j, at: j };
    const count = j - best.at + 1;
    const spanMs = t - times[best.at];
    if (count - rate * spanMs > worst.excess) worst = { excess: count - rate * spanMs, count, spanMs };
    while (times[from] <= t - 1_000) from++;
    if (j - from + 1 >= Math.max(1, bounds.perSecond / 2)) pressed++;
  });
  const allowance = burst + rate * bounds.lagMs;
  const bound = `n claims in any span of T ms <= ${fmt(burst)} + ${fmt(bounds.perSecond, 2)}/s x (T + ${fmt(bounds.lagMs)} ms)`;
  const judged = { n: pressed, what: `claims of ${bounds.queue} while it ran at half its rate or more` };
  if (times.length === 0) return { name, pass: 'unknown', figure: `no claims of ${bounds.queue}`, bound, judged };
  const figure =
    `worst span: ${fmt(worst.count)} claims of ${bounds.queue} in ${fmt(worst.spanMs)} ms, ${fmt(worst.excess, 1)} beyond the rate (allowed ${fmt(allowance, 1)}: burst ${fmt(burst)} + the lag); ` +
    `${fmt(times.length)} claims, ${fmt(pressed)} of them while the queue ran at half its rate or more`;
  if (worst.excess > allowance) return { name, pass: false, figure, bound, judged, examples: [{ queue: bounds.queue, claims: worst.count, spanMs: worst.spanMs, allowed: Math.floor(burst + rate * (worst.spanMs + bounds.lagMs)) }] };
  return { name, pass: pressed > 0 ? true : 'unknown', figure, bound, judged };
}

export const startRate: CheckerDef<StartRateBounds> = {
  name: 'start-rate',
  says: "a rate-limited queue's claims, across the fleet, never outrun its token bucket: at most burst + rate x T in any T",
  check: checkStartRate,
  bounds: { queue: 'string', perSecond: 'number', lagMs: 'number' },
  defaults: { queue: '', perSecond: 0, lagMs: 500 },
};
