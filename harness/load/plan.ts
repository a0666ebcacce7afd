import type { Rng } from '../../engine/rng.ts';
import { constantTimes } from './constant.ts';
import { jobParams, weightedPick } from './mix.ts';
import { poissonTimes } from './poisson.ts';
import type { Arrival, Lane, MixEntry, PlanInput } from './types.ts';

/** Offer times (ms since the load started) of a model, in order. */
export function arrivalTimes(input: Pick<PlanInput, 'load' | 'durationS'>, rng: Rng): Iterable<number> {
  const durationMs = input.durationS * 1000;
  switch (input.load.model) {
    case 'constant':
      return constantTimes(input.load.rate, durationMs);
    case 'poisson':
      return poissonTimes(input.load.rate, durationMs, rng);
  }
}

/**
 * The whole open-model workload, lazily and deterministically: every offer's
 * intended time, kind, lane and handler parameters. Each concern draws from
 * its own fork of the seed (times, kinds, lanes, params, counted jobs), so
 * changing the mix does not move the arrival times, and the same seed always
 * yields the same plan.
 *
 * Share-based entries pick a kind in proportion to their shares; a count
 * entry places exactly `count` jobs at seeded random times, each taking the
 * place of the first arrival at or after its time (so the offered rate stays
 * the rate; any left past the last arrival are appended at their own time).
 */
export function* arrivals(input: PlanInput, rng: Rng): Generator<Arrival> {
  const durationMs = input.durationS * 1000;
  const kindRng = rng.fork('kinds');
  const laneRng = rng.fork('lanes');
  const paramRng = rng.fork('params');
  // Its own fork: giving a scenario tenants moves none of its other draws.
  const tenantRng = rng.fork('tenants');
  const tenantKeys = input.tenants ? Object.keys(input.tenants.keys) : [];
  const tenantShares = tenantKeys.map((k) => input.tenants!.keys[k]);
  const shared = input.mix.filter((e) => e.share !== undefined);
  const counted = placeCounted(input.mix, durationMs, rng.fork('counted'));
  let next = 0;
  let op = 0;

  const make = (atMs: number, entry: MixEntry): Arrival => {
    const lane = pickLane(input.lanes, entry, laneRng);
    const a: Arrival = { op: op++, atMs, queue: lane.queue, priority: lane.priority, kind: entry.kind, params: jobParams(entry, paramRng) };
    if (input.tenants?.queues.includes(lane.queue)) a.fairnessKey = tenantKeys[weightedPick(tenantShares, tenantRng)];
    if (entry.payloadBytes !== undefined) a.payloadBytes = entry.payloadBytes;
    return a;
  };

  for (const t of arrivalTimes(input, rng.fork('times'))) {
    if (next < counted.length && counted[next].atMs <= t) {
      yield make(t, counted[next++].entry);
      continue;
    }
    yield make(t, shared[weightedPick(shared.map((e) => e.share!), kindRng)]);
  }
  while (next < counted.length) {
    const c = counted[next++];
    yield make(c.atMs, c.entry);
  }
}

/** The plan as an array: for tests, reports and short runs. */
export function planLoad(input: PlanInput, rng: Rng): Arrival[] {
  return [...arrivals(input, rng)];
}

function placeCounted(mix: readonly MixEntry[], durationMs: number, rng: Rng): { atMs: number; entry: MixEntry }[] {
  const out: { atMs: number; entry: MixEntry }[] = [];
  for (const entry of mix) for (let i = 0; i < (entry.count ?? 0); i++) out.push({ atMs: rng.next() * durationMs, entry });
  return out.sort((a, b) => a.atMs - b.atMs);
}

function pickLane(lanes: readonly Lane[], entry: MixEntry, rng: Rng): Lane {
  const allowed = entry.lanes ? lanes.filter((l) => entry.lanes!.includes(l.queue)) : lanes;
  const weights = allowed.map((l) => l.share);
  // Lanes an entry is pinned to may all carry share 0 (a lane fed only by that kind): pick evenly.
  return allowed[weightedPick(weights.some((w) => w > 0) ? weights : weights.map(() => 1), rng)];
}
