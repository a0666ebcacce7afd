import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf } from '../history.ts';
import { firstN, fmt, maxOf, minOf, type CheckerDef } from './types.ts';

export interface WeightedShareBounds {
  /** The fair queue. */
  queue: string;
  /** Its weighted keys, `key:weight` (derived from the scenario's keyWeights). */
  weights: string[];
  /** Starts of the weighted keys per judged window. */
  windowStarts: number;
  /** How far a key's share of a window's starts may be from its weight's share (w / W), as a fraction of the window. */
  tolerance: number;
}

type Claim = Extract<HistoryEvent, { type: 'job:claimed' }>;

/** `gold:3` -> ['gold', 3]; throws naming the bound when it is not `key:weight`. */
function parseWeight(entry: string): [string, number] {
  const at = entry.lastIndexOf(':');
  const weight = Number(entry.slice(at + 1));
  if (at <= 0 || !Number.isInteger(weight) || weight < 1) throw new Error(`weighted-share: weights entry ${JSON.stringify(entry)} is not key:weight (an integer of at least 1)`);
  return [entry.slice(0, at), weight];
}

/**
 * A fair queue shares its claims by weight (docs/operating.md, "Tenants"):
 * while keys of weights w_a, w_b, … all have jobs waiting, each takes w_k of
 * every W = Σw of their starts, within one turn at any point, whatever size
 * the claims are. Judged over the claims of the fair pick (a crashed job's
 * rerun goes through the suspect claim and is left out), in database-clock
 * order, from the moment every weighted key had a job due until the first of
 * them had its last job claimed: cut into windows of `windowStarts` starts of
 * the weighted keys, each key's count in each window must be within
 * `tolerance` x windowStarts of windowStarts x w_k / W. The tolerance is
 * wider than the engine's own bound (w_k per prefix): claims that began at
 * once wait for the queue's lock in an order the claim's now() does not show.
 * Inconclusive when no full window had every weighted key waiting.
 */
export function checkWeightedShare(history: readonly HistoryEvent[], _final: FinalState, bounds: WeightedShareBounds): InvariantResult {
  const weights = new Map(bounds.weights.map(parseWeight));
  const total = [...weights.values()].reduce((a, b) => a + b, 0);
  const claims = eventsOf(history, 'job:claimed').filter(
    (c): c is Claim & { fairnessKey: string; dbTime: number } =>
      c.queue === bounds.queue && typeof c.fairnessKey === 'string' && weights.has(c.fairnessKey) && c.dbTime !== undefined && (c.crashCount ?? 0) === 0,
  );
  // Every weighted key waits from its first job's due time to its last job's claim.
  const keys = [...weights.keys()];
  const of = (k: string) => claims.filter((c) => c.fairnessKey === k);
  const from = keys.every((k) => of(k).length) ? maxOf(keys.map((k) => minOf(of(k).map((c) => c.runAt)))) : Infinity;
  const to = keys.every((k) => of(k).length) ? minOf(keys.map((k) => maxOf(of(k).map((c) => c.dbTime)))) : -Infinity;
  const judged = claims.filter((c) => c.dbTime >= from && c.dbTime <= to).sort((a, b) => a.dbTime - b.dbTime || a.jobId - b.jobId);
  const windows: Record<string, number>[] = [];
  for (let i = 0; i + bounds.windowStarts <= judged.length; i += bounds.windowStarts) {
    const counts = Object.fromEntries(keys.map((k) => [k, 0]));
    for (const c of judged.slice(i, i + bounds.windowStarts)) counts[c.fairnessKey]++;
    windows.push(counts);
  }
  const allowed = bounds.tolerance * bounds.windowStarts;
  const expected = (k: string) => (bounds.windowStarts * weights.get(k)!) / total;
  const off = windows.flatMap((w, i) => keys.filter((k) => Math.abs(w[k] - expected(k)) > allowed).map((k) => ({ window: i + 1, key: k, starts: w[k], expected: expected(k) })));
  const sums = keys.map((k) => `${k} ${fmt(windows.reduce((a, w) => a + w[k], 0))}`).join(', ');
  return {
    name: 'weighted-share',
    pass: off.length > 0 ? false : windows.length === 0 ? 'unknown' : true,
    figure: windows.length
      ? `${fmt(windows.length)} windows of ${fmt(bounds.windowStarts)} starts while ${keys.join(', ')} all waited (${sums}); ${fmt(off.length)} shares off their weight`
      : `no window of ${fmt(bounds.windowStarts)} starts with ${keys.join(', ')} all waiting (${fmt(judged.length)} starts)`,
    bound: `each of ${bounds.weights.join(', ')} takes its weight's share of every ${fmt(bounds.windowStarts)} starts, within ${fmt(allowed)}`,
    judged: { n: windows.length, what: `windows of ${fmt(bounds.windowStarts)} starts while every weighted key had jobs waiting` },
    ...(off.length ? { examples: firstN(off) } : {}),
  };
}

export const weightedShare: CheckerDef<WeightedShareBounds> = {
  name: 'weighted-share',
  says: "while keys of different weights all have jobs waiting in a fair queue, each takes its weight's share of the starts",
  check: checkWeightedShare,
  bounds: { queue: 'string', weights: 'string[]', windowStarts: 'number', tolerance: 'number' },
  // queue and weights come from the scenario's keyWeights (from-scenario.ts); none: nothing to judge.
  defaults: { queue: '', weights: [], windowStarts: 40, tolerance: 0.15 },
};
