import type { EventOf, FinalState, HistoryEvent, InvariantResult, RedCounts } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

type Scrape = EventOf<'metrics:scraped'>;

/** Each RED count and the events of the worker's own that must add up to it; undefined: a stored run that did not read it. */
const FED_BY: [label: string, read: (r: RedCounts) => Record<string, number> | undefined, event: HistoryEvent['type']][] = [
  ['claimed', (r) => r.claimed, 'job:claimed'],
  ['completed', (r) => r.completed, 'job:completed'],
  ['failed', (r) => r.failed, 'job:failed'],
  ['leases lost', (r) => r.leasesLost, 'lease:lost'],
  ['durations of completed', (r) => r.durations.completed ?? {}, 'job:completed'],
  ['durations of failed', (r) => r.durations.failed ?? {}, 'job:failed'],
  ['dead-lettered', (r) => r.deadLettered, 'job:dead'],
  ['leases expired', (r) => r.leasesExpired, 'lease:rescued'],
];

const FED = new Set<string>(FED_BY.map(([, , event]) => event));
const same = (a: RedCounts, b: RedCounts) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The RED series each worker serves on /metrics (jobs claimed, completed,
 * failed and dead-lettered, leases lost and expired, and the duration
 * histogram's count per outcome) against what that worker process reported
 * doing: its own job:claimed, job:completed, job:failed, job:dead, lease:lost
 * and lease:rescued events, per queue. An operator's error-rate, throughput
 * and dead-letter alerts read those series. job:dead and lease:rescued name no
 * worker (a rescuer's pass is not any one claim's): they are the worker's
 * whose process reported them, the one its node ran since that worker's
 * worker:settings.
 *
 * Judged per worker alive at the end and scraped twice with no count moving
 * in between: an idle worker, so every event behind its first scrape's counts
 * is in the history at or before that scrape, and none after it. A worker
 * killed earlier took its counters with it; one still busy is left out.
 * Unknown when no worker was judged, or the judged ones did nothing at all.
 */
export function checkRedMetrics(history: readonly HistoryEvent[], _final: FinalState): InvariantResult {
  const base = { name: 'red-metrics', bound: "per worker and queue, each RED count equal to that worker's own events up to its scrape" };
  const scrapes = new Map<string, Scrape[]>();
  for (const e of history) {
    if (e.type !== 'metrics:scraped') continue;
    const list = scrapes.get(e.workerId) ?? [];
    list.push(e);
    scrapes.set(e.workerId, list);
  }
  const judged: Scrape[] = [];
  let busy = 0;
  for (const list of scrapes.values()) {
    const [a, b] = list.slice(-2);
    if (b && same(a.red, b.red)) judged.push(a);
    else busy++;
  }
  const what = "events behind idle workers' RED counts";
  if (judged.length === 0) return { ...base, pass: 'unknown', figure: `no worker scraped twice while idle (${fmt(busy)} busy or scraped once): nothing to judge`, judged: { n: 0, what } };

  const started = new Map<string, { node: string; t: number }>();
  for (const e of history) if (e.type === 'worker:settings') started.set(e.workerId, { node: e.node, t: e.t });
  const off: Record<string, unknown>[] = [];
  const counted = new Set<HistoryEvent>(); // an event feeding two series (a count and a duration) is one event
  for (const scrape of judged) {
    const process = started.get(scrape.workerId);
    const ownedBy = (e: HistoryEvent) =>
      'workerId' in e ? e.workerId === scrape.workerId : process !== undefined && e.node === process.node && e.t >= process.t;
    const own = history.filter((e): e is HistoryEvent & { queue: string } => FED.has(e.type) && e.t <= scrape.t && ownedBy(e));
    for (const [label, read, event] of FED_BY) {
      const served = read(scrape.red);
      if (served === undefined) continue;
      const seen: Record<string, number> = {};
      for (const e of own) {
        if (e.type !== event) continue;
        seen[e.queue] = (seen[e.queue] ?? 0) + 1;
        counted.add(e);
      }
      for (const queue of new Set([...Object.keys(served), ...Object.keys(seen)])) {
        const s = served[queue] ?? 0;
        const n = seen[queue] ?? 0;
        if (s !== n) off.push({ workerId: scrape.workerId, queue, series: label, served: s, events: n });
      }
    }
  }
  const figure = `${fmt(judged.length)} workers judged (${fmt(busy)} left out), ${fmt(off.length)} counts off, of ${fmt(counted.size)} events counted`;
  if (off.length === 0 && counted.size === 0) return { ...base, pass: 'unknown', figure: `${figure}: the judged workers did nothing`, judged: { n: 0, what } };
  return { ...base, pass: off.length === 0, figure, judged: { n: counted.size, what }, ...(off.length ? { examples: firstN(off) } : {}) };
}

export const redMetrics: CheckerDef<Record<string, never>> = {
  name: 'red-metrics',
  says: "each worker's RED series on /metrics (claimed, completed, failed, dead-lettered, leases lost and expired, durations by outcome) count what that worker reported doing",
  check: checkRedMetrics,
  bounds: {},
  defaults: {},
};
