import type { EventOf, FinalState, HistoryEvent, InvariantResult, RedCounts } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

type Scrape = EventOf<'metrics:scraped'>;

/** Each RED count and the events of the worker's own that must add up to it. */
const FED_BY: [label: string, read: (r: RedCounts) => Record<string, number>, event: HistoryEvent['type']][] = [
  ['claimed', (r) => r.claimed, 'job:claimed'],
  ['completed', (r) => r.completed, 'job:completed'],
  ['failed', (r) => r.failed, 'job:failed'],
  ['leases lost', (r) => r.leasesLost, 'lease:lost'],
  ['durations of completed', (r) => r.durations.completed ?? {}, 'job:completed'],
  ['durations of failed', (r) => r.durations.failed ?? {}, 'job:failed'],
];

const FED = new Set<string>(FED_BY.map(([, , event]) => event));
const same = (a: RedCounts, b: RedCounts) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The RED series each worker serves on /metrics (jobs claimed, completed and
 * failed, leases lost, and the duration histogram's count per outcome) against
 * what that worker process reported doing: its own job:claimed, job:completed,
 * job:failed and lease:lost events, per queue. An operator's error-rate and
 * throughput alerts read those series.
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
  if (judged.length === 0) return { ...base, pass: 'unknown', figure: `no worker scraped twice while idle (${fmt(busy)} busy or scraped once): nothing to judge` };

  const off: Record<string, unknown>[] = [];
  let counted = 0;
  for (const scrape of judged) {
    const own = history.filter((e): e is HistoryEvent & { workerId: string; queue: string } => FED.has(e.type) && 'workerId' in e && e.workerId === scrape.workerId && e.t <= scrape.t);
    counted += own.length;
    for (const [label, read, event] of FED_BY) {
      const served = read(scrape.red);
      const seen: Record<string, number> = {};
      for (const e of own) if (e.type === event) seen[e.queue] = (seen[e.queue] ?? 0) + 1;
      for (const queue of new Set([...Object.keys(served), ...Object.keys(seen)])) {
        const s = served[queue] ?? 0;
        const n = seen[queue] ?? 0;
        if (s !== n) off.push({ workerId: scrape.workerId, queue, series: label, served: s, events: n });
      }
    }
  }
  const figure = `${fmt(judged.length)} workers judged (${fmt(busy)} left out), ${fmt(off.length)} counts off, of ${fmt(counted)} events counted`;
  if (off.length === 0 && counted === 0) return { ...base, pass: 'unknown', figure: `${figure}: the judged workers did nothing` };
  return { ...base, pass: off.length === 0, figure, ...(off.length ? { examples: firstN(off) } : {}) };
}

export const redMetrics: CheckerDef<Record<string, never>> = {
  name: 'red-metrics',
  says: "each worker's RED series on /metrics (claimed, completed, failed, leases lost, durations by outcome) count what that worker reported doing",
  check: checkRedMetrics,
  bounds: {},
  defaults: {},
};
