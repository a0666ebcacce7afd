import type { EventOf, HistoryEvent } from '../history.ts';

type Sample = EventOf<'sample'> & { harness: NonNullable<EventOf<'sample'>['harness']> };

/** A stretch of run time over which the harness saw an alert's condition hold, for one key (a queue; '' for a global one). */
export interface ConditionSpan {
  key: string;
  fromT: number;
  /** The first sample that saw it no longer hold; null: it held until the end. */
  toT: number | null;
}

/**
 * When the harness's own figures say an alert's condition holds: the
 * documented meaning of each rule of ops/prometheus/alerts.yml (the table of
 * docs/metrics.md), judged on the harness's own query (`sample.harness`) and
 * its own events, not on anything the engine exported. The thresholds are the
 * documented ones, written here on purpose a second time: a rules file whose
 * threshold drifted from the documentation is what prometheus-alerts catches.
 * `key` names the label an alert is per (`queue`), or null for a global one.
 */
export const ALERT_CONDITIONS: Record<string, { key: 'queue' | null; holds: (s: Sample, ctx: Context) => string[] }> = {
  // "a queue's oldest due job waited over 60 s" (paused queues left out).
  StampedeOldestUnclaimedAgeOverSLO: { key: 'queue', holds: (s, ctx) => queuesWhere(s, (q, f) => f.oldestMs > 60_000 && !ctx.paused.has(q)) },
  // "deriv(stampede_dead_letter_depth[15m]) > 0": read as the depth above its lowest in the last 15 minutes.
  StampedeDeadLetterDepthRising: {
    key: 'queue',
    holds: (s, ctx) => queuesWhere(s, (q, f) => f.deadLetters > 0 && f.deadLetters > ctx.lowest(q, s.t - 15 * 60_000)),
  },
  // "more than 20 jobs dead-lettered in 10 min".
  StampedeDeadLetteringFast: { key: 'queue', holds: (s, ctx) => ctx.deadSince(s.t - 10 * 60_000, s.t).filter(([, n]) => n > 20).map(([q]) => q) },
  // "expired leases nobody rescues".
  StampedeLeasesOverdue: { key: 'queue', holds: (s) => queuesWhere(s, (_q, f) => f.overdue > 0) },
  // "a transaction held the xmin horizon over 10 min".
  StampedeXminHorizonOld: { key: null, holds: (s) => (s.harness.xminAgeMs > 600_000 ? [''] : []) },
};

interface Context {
  /** Queues paused at the sample, by the harness's own pause and resume events. */
  paused: Set<string>;
  /** A queue's lowest dead-letter depth over the samples since `fromT`. */
  lowest: (queue: string, fromT: number) => number;
  /** job:dead events per queue in (fromT, toT]. */
  deadSince: (fromT: number, toT: number) => [string, number][];
}

function queuesWhere(s: Sample, pick: (queue: string, f: Sample['harness']['queues'][string]) => boolean): string[] {
  return Object.entries(s.harness.queues ?? {})
    .filter(([q, f]) => pick(q, f))
    .map(([q]) => q);
}

/** Every span over which the harness saw `alert`'s condition hold, per key; [] for an alert it has no condition for. */
export function conditionSpans(history: readonly HistoryEvent[], alert: string): ConditionSpan[] {
  const condition = ALERT_CONDITIONS[alert];
  if (!condition) return [];
  const samples: Sample[] = [];
  const paused = new Set<string>();
  const pausedAt = new Map<Sample, Set<string>>();
  const deaths: EventOf<'job:dead'>[] = [];
  for (const e of history) {
    if (e.type === 'queue:paused') paused.add(e.queue);
    if (e.type === 'queue:resumed') paused.delete(e.queue);
    if (e.type === 'job:dead') deaths.push(e);
    if (e.type === 'sample' && e.harness?.queues) {
      samples.push(e as Sample);
      pausedAt.set(e as Sample, new Set(paused));
    }
  }
  const spans: ConditionSpan[] = [];
  const open = new Map<string, ConditionSpan>();
  samples.forEach((s, i) => {
    const ctx: Context = {
      paused: pausedAt.get(s)!,
      lowest: (queue, fromT) => {
        let low = Infinity;
        for (let j = i; j >= 0 && samples[j].t >= fromT; j--) low = Math.min(low, samples[j].harness.queues[queue]?.deadLetters ?? 0);
        return low;
      },
      deadSince: (fromT, toT) => {
        const n = new Map<string, number>();
        for (const d of deaths) if (d.t > fromT && d.t <= toT) n.set(d.queue, (n.get(d.queue) ?? 0) + 1);
        return [...n];
      },
    };
    const holding = new Set(condition.holds(s, ctx));
    for (const key of holding) {
      if (open.has(key)) continue;
      const span = { key, fromT: s.t, toT: null };
      open.set(key, span);
      spans.push(span);
    }
    for (const [key, span] of open) {
      if (holding.has(key)) continue;
      span.toT = s.t;
      open.delete(key);
    }
  });
  return spans;
}
