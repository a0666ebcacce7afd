import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, otelAbsent, otelNotHere, type CheckerDef } from './types.ts';

export type OtelCountsAgreeBounds = Record<string, never>;

const CONSUMED = 'messaging.client.consumed.messages';
const DURATION = 'messaging.process.duration';

/** A worker's own events so far, per queue: claims, completions and failures. */
type Tally = Map<string, { claimed: number; completed: number; failed: number }>;

/**
 * What a worker recorded through OpenTelemetry's metrics API equals what it
 * ran (docs/metrics.md): at each collection of its meter provider (a
 * scenario with `otel`: `otel:metrics`, shipped in order with its events),
 * per queue, the consumed-messages counter equals its `job:claimed` events
 * before it, messaging.process.duration's count without error.type its
 * `job:completed` events, and with an error.type its `job:failed` events.
 * Events are the worker's own (its worker id: a restarted process counts
 * afresh). Unknown when no collection followed an event.
 */
export function checkOtelCountsAgree(history: readonly HistoryEvent[], _final: FinalState): InvariantResult {
  const tallies = new Map<string, Tally>();
  const tallyOf = (workerId: string, queue: string) => {
    const t = tallies.get(workerId) ?? new Map();
    tallies.set(workerId, t);
    const q = t.get(queue) ?? { claimed: 0, completed: 0, failed: 0 };
    t.set(queue, q);
    return q;
  };
  const off: Record<string, unknown>[] = [];
  let collections = 0;
  const lastCounted = new Map<string, number>();
  for (const e of history) {
    if (e.type === 'job:claimed') tallyOf(e.workerId, e.queue).claimed++;
    else if (e.type === 'job:completed') tallyOf(e.workerId, e.queue).completed++;
    else if (e.type === 'job:failed') tallyOf(e.workerId, e.queue).failed++;
    else if (e.type === 'otel:metrics') {
      const seen = tallies.get(e.workerId) ?? new Map();
      const sum = (name: string, queue: string, errored: boolean) =>
        e.points.filter((p) => p.name === name && p.queue === queue && (name === CONSUMED || (p.errorType !== null) === errored)).reduce((s, p) => s + p.value, 0);
      const queues = new Set([...seen.keys(), ...e.points.map((p) => p.queue)]);
      let events = 0;
      for (const queue of queues) {
        const want = seen.get(queue) ?? { claimed: 0, completed: 0, failed: 0 };
        events += want.claimed + want.completed + want.failed;
        const got = { claimed: sum(CONSUMED, queue, false), completed: sum(DURATION, queue, false), failed: sum(DURATION, queue, true) };
        if (got.claimed !== want.claimed || got.completed !== want.completed || got.failed !== want.failed) {
          off.push({ workerId: e.workerId, t: e.t, queue, otel: got, events: want });
        }
      }
      if (events > 0) collections++;
      lastCounted.set(e.workerId, events);
    }
  }
  const counted = [...lastCounted.values()].reduce((s, n) => s + n, 0);
  const base = {
    name: 'otel-counts-agree',
    bound: "at each collection, per worker and queue: consumed messages = its claims, process.duration's count = its completions, and with error.type its failures",
    judged: { n: collections, what: 'collections of a worker meter that had counted events' },
    figure: `${fmt(off.length)} series off over ${fmt(collections)} collections; ${fmt(counted)} claims, completions and failures behind the workers' last collections`,
  };
  if (off.length) return { ...base, pass: false, examples: firstN(off) };
  const absent = otelAbsent(history);
  return absent ? otelNotHere(base, absent) : { ...base, pass: collections > 0 ? true : 'unknown' };
}

export const otelCountsAgree: CheckerDef<OtelCountsAgreeBounds> = {
  name: 'otel-counts-agree',
  says: "each worker's OpenTelemetry RED counts equal the claims, completions and failures it reported before each collection",
  check: checkOtelCountsAgree,
  bounds: {},
  defaults: {},
};
