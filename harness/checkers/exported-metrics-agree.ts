import type { EventOf, FinalState, HistoryEvent, InvariantResult, SampledQueue, ScrapedSeries } from '../history.ts';
import { NO_ROWS } from '../history.ts';
import { isAnswers, prometheusAnswers } from './prometheus-answers.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface ExportedMetricsAgreeBounds {
  /** How far a scrape may be from the harness's reading or event it is held to, ms: a scrape reads what was set up to its reply. Default 1,000. */
  lagMs: number;
  /** How far an exported oldest-unclaimed-age may be from the harness's, ms (the two round differently). Default 2. */
  toleranceMs: number;
  /**
   * A depth the engine marks as an estimate (`stampede_queue_depth_estimated`, `stampede_dead_letter_depth_estimated`)
   * may be this far from the truth, as a share of the queue's true depth (sampler-agrees' `estimateError`); whether
   * dead letters are above 0 stays exact. Default 0.5.
   */
  estimateError: number;
}

type Sample = EventOf<'sample'> & { harness: NonNullable<EventOf<'sample'>['harness']> };
type Harness = Sample['harness'];

/** The queue-state gauges and how each reads the harness's reading for a series' labels; undefined: a label value that cannot be. */
const GAUGES: Record<string, (h: Harness, labels: Record<string, string>) => number | undefined> = {
  stampede_queue_depth: (h, l) => (DEPTH_STATES.includes(l.state) ? queueOf(h, l.queue)[l.state as 'pending' | 'failed' | 'claimed'] : undefined),
  stampede_queue_oldest_unclaimed_age_seconds: (h, l) => queueOf(h, l.queue).oldestMs / 1000,
  stampede_dead_letter_depth: (h, l) => queueOf(h, l.queue).deadLetters,
};
const DEPTH_STATES = ['pending', 'failed', 'claimed'];
const queueOf = (h: Harness, queue: string | undefined): SampledQueue => (queue !== undefined ? h.queues[queue] : undefined) ?? NO_ROWS;

/** The RED counters and the worker's own events each must count. */
const COUNTERS: Record<string, HistoryEvent['type']> = {
  stampede_jobs_claimed_total: 'job:claimed',
  stampede_jobs_completed_total: 'job:completed',
  stampede_jobs_failed_total: 'job:failed',
  stampede_jobs_dead_lettered_total: 'job:dead',
};
const QUANTILES = [0.5, 0.95, 0.99];

/**
 * What Prometheus scraped from the run equals what the harness saw, at every
 * scrape. The queue-state gauges (depth by state, oldest-unclaimed-age,
 * dead-letter depth, paused) from the runner's engine sampler: each scraped
 * value equals the harness's own reading (sample.harness) of the last round
 * before the scrape or one within `lagMs` after it, per queue and label;
 * every queue the harness read rows of has its series, and no series carries
 * a label value that is no queue state. The RED counters from each worker
 * process: each scraped value lies between that worker's own events up to
 * `lagMs` before the scrape and up to `lagMs` after it, per queue. The
 * duration histogram at each worker's last scrape: the bucket that holds each
 * of p50, p95, p99 holds the same quantile of the durations the worker
 * reported (within bucket resolution). Unknown without Prometheus, or when
 * nothing was scraped.
 */
export function checkExportedMetricsAgree(history: readonly HistoryEvent[], _final: FinalState, b: ExportedMetricsAgreeBounds): InvariantResult {
  const base = {
    name: 'exported-metrics-agree',
    bound: `every scrape: queue-state gauges equal the harness's reading (age within ${fmt(b.toleranceMs)} ms), RED counters within the worker's events ±${fmt(b.lagMs)} ms, duration quantiles in the same bucket`,
  };
  const what = 'scraped samples and quantiles';
  const answers = prometheusAnswers(history, base, what);
  if (!isAnswers(answers)) return answers;
  const off: Record<string, unknown>[] = [];
  const samples = history.filter((e): e is Sample => e.type === 'sample' && e.harness?.queues !== undefined);
  let judged = checkGauges(answers.series, samples, pauseStates(history), b, off);
  judged += checkCounters(answers.series, history, b, off);
  judged += checkQuantiles(answers.series.get('stampede_job_duration_seconds_bucket') ?? [], history, b, off);
  const figure = `${fmt(off.length)} disagreements over ${fmt(judged)} ${what}`;
  if (judged === 0) return { ...base, pass: 'unknown', figure: 'Prometheus scraped nothing the harness can compare', judged: { n: 0, what } };
  return { ...base, pass: off.length === 0, figure, judged: { n: judged, what }, ...(off.length ? { examples: firstN(off) } : {}) };
}

/** The harness's readings a scrape at `ts` may show: the last at or before it, and any within lagMs after it. */
function readingsAt(samples: readonly Sample[], ts: number, lagMs: number): Sample[] {
  let last = -1;
  while (last + 1 < samples.length && samples[last + 1].t <= ts) last++;
  const out = last >= 0 ? [samples[last]] : [];
  for (let i = last + 1; i < samples.length && samples[i].t <= ts + lagMs; i++) out.push(samples[i]);
  return out;
}

/** Each queue's paused state over time, from the harness's own pause and resume events: [t, queue, paused]. */
function pauseStates(history: readonly HistoryEvent[]): [number, string, boolean][] {
  return history.flatMap((e): [number, string, boolean][] => (e.type === 'queue:paused' ? [[e.t, e.queue, true]] : e.type === 'queue:resumed' ? [[e.t, e.queue, false]] : []));
}

function checkGauges(series: Map<string, ScrapedSeries[]>, samples: readonly Sample[], pauses: [number, string, boolean][], b: ExportedMetricsAgreeBounds, off: Record<string, unknown>[]): number {
  let n = 0;
  const exported = new Set<string>();
  for (const [metric, read] of Object.entries(GAUGES)) {
    for (const s of series.get(metric) ?? []) {
      const marker = metric === 'stampede_queue_depth' ? 'stampede_queue_depth_estimated' : metric === 'stampede_dead_letter_depth' ? 'stampede_dead_letter_depth_estimated' : null;
      const estimated = marker ? (series.get(marker) ?? []).find((c) => c.labels.queue === s.labels.queue) : undefined;
      exported.add(`${metric}/${s.labels.queue}`);
      let reported = false;
      for (const [ts, v] of s.samples) {
        const expected = readingsAt(samples, ts, b.lagMs).map((h) => read(h.harness, s.labels));
        if (expected.length === 0) continue;
        n++;
        if (expected[0] === undefined) {
          if (!reported) off.push({ metric, labels: s.labels, problem: 'a label value that is no queue state' });
          reported = true;
          continue;
        }
        // Claimed jobs are always counted; the other depths, and dead letters, may be estimates past the budget.
        const isEstimate = s.labels.state !== 'claimed' && estimated?.samples.some(([t, c]) => t === ts && c === 1);
        const tolerance = metric.endsWith('_seconds') ? b.toleranceMs / 1000 + 1e-9 : 0;
        const scales = readingsAt(samples, ts, b.lagMs).map((h) => {
          const q = queueOf(h.harness, s.labels.queue);
          return metric === 'stampede_dead_letter_depth' ? q.deadLetters : q.pending + q.failed;
        });
        const agrees = expected.some(
          (x, i) =>
            x !== undefined &&
            (isEstimate
              ? Math.abs(v - x) <= b.estimateError * Math.max(1, scales[i]) && (metric !== 'stampede_dead_letter_depth' || v > 0 === x > 0)
              : Math.abs(v - x) <= tolerance),
        );
        if (!agrees) off.push({ metric, labels: s.labels, t: ts, scraped: v, harness: expected });
      }
    }
  }
  for (const s of series.get('stampede_queue_paused') ?? []) {
    exported.add(`stampede_queue_paused/${s.labels.queue}`);
    const mine = pauses.filter(([, q]) => q === s.labels.queue);
    for (const [ts, v] of s.samples) {
      n++;
      // Paused or not as of lagMs before the scrape, or as any pause or resume within lagMs either side made it.
      const allowed = [mine.filter(([t]) => t <= ts - b.lagMs).at(-1)?.[2] ?? false, ...mine.filter(([t]) => Math.abs(t - ts) <= b.lagMs).map(([, , p]) => p)];
      if (!allowed.includes(v === 1)) off.push({ metric: 'stampede_queue_paused', labels: s.labels, t: ts, scraped: v, harness: allowed });
    }
  }
  // A queue the harness read rows of, with no series of a gauge: exported under another label, or not at all.
  const queues = new Set(samples.flatMap((s) => Object.entries(s.harness.queues).filter(([, f]) => f.pending + f.failed + f.claimed + f.deadLetters > 0).map(([q]) => q)));
  for (const queue of queues) {
    for (const metric of [...Object.keys(GAUGES), 'stampede_queue_paused']) {
      if (!exported.has(`${metric}/${queue}`)) off.push({ metric, queue, problem: 'the harness read rows of this queue; Prometheus has no series for it' });
    }
  }
  return n;
}

/** Which worker an event belongs to: its workerId, or (job:dead names none) the worker its node ran at the time. */
function ownerOf(history: readonly HistoryEvent[]): (e: HistoryEvent) => string | undefined {
  const settings = history.filter((e): e is EventOf<'worker:settings'> => e.type === 'worker:settings');
  return (e) => ('workerId' in e && typeof e.workerId === 'string' ? e.workerId : settings.filter((s) => s.node === e.node && s.t <= e.t).at(-1)?.workerId);
}

function checkCounters(series: Map<string, ScrapedSeries[]>, history: readonly HistoryEvent[], b: ExportedMetricsAgreeBounds, off: Record<string, unknown>[]): number {
  const owner = ownerOf(history);
  // Event times by counter, worker and queue, in order.
  const times = new Map<string, number[]>();
  const kinds = new Map(Object.entries(COUNTERS).map(([m, type]) => [type as string, m]));
  for (const e of history) {
    const metric = kinds.get(e.type);
    if (!metric || !('queue' in e)) continue;
    const key = `${metric}/${owner(e)}/${e.queue}`;
    (times.get(key) ?? times.set(key, []).get(key)!).push(e.t);
  }
  let n = 0;
  for (const metric of Object.keys(COUNTERS)) {
    // Summed over the other labels (a failure's reason) per worker, queue and scrape.
    const sums = new Map<string, number>();
    for (const s of series.get(metric) ?? []) {
      for (const [ts, v] of s.samples) {
        const key = `${metric}/${s.labels.worker}/${s.labels.queue}@${ts}`;
        sums.set(key, (sums.get(key) ?? 0) + v);
      }
    }
    for (const [key, v] of sums) {
      const [series, at] = key.split('@');
      const ts = Number(at);
      const list = times.get(series) ?? [];
      const [lo, hi] = [countUpTo(list, ts - b.lagMs), countUpTo(list, ts + b.lagMs)];
      n++;
      if (v < lo || v > hi) off.push({ metric, series: series.slice(metric.length + 1), t: ts, scraped: v, events: lo === hi ? lo : `${lo}-${hi}` });
    }
  }
  return n;
}

/**
 * How many of `sorted` (ascending) are <= t, by bisection: once per scraped sample, and a run's scrapes grow
 * with its length as its events do, so a scan here made the checker quadratic in the run's length.
 */
function countUpTo(sorted: readonly number[], t: number): number {
  let [lo, hi] = [0, sorted.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function checkQuantiles(buckets: readonly ScrapedSeries[], history: readonly HistoryEvent[], b: ExportedMetricsAgreeBounds, off: Record<string, unknown>[]): number {
  const groups = new Map<string, { ts: number; le: [number, number][] }>();
  for (const s of buckets) {
    const last = s.samples.at(-1);
    if (!last) continue;
    const key = `${s.labels.worker}/${s.labels.queue}/${s.labels.outcome}`;
    const g = groups.get(key) ?? groups.set(key, { ts: last[0], le: [] }).get(key)!;
    g.le.push([s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), last[1]]);
  }
  let n = 0;
  for (const [key, g] of groups) {
    const [worker, queue, outcome] = key.split('/');
    const le = g.le.sort((x, y) => x[0] - y[0]);
    const count = le.at(-1)?.[1] ?? 0;
    if (count === 0) continue;
    const type = outcome === 'completed' ? 'job:completed' : 'job:failed';
    const durations = history
      .filter((e) => e.type === type && e.workerId === worker && e.queue === queue && e.t <= g.ts + b.lagMs && typeof e.durationMs === 'number')
      .slice(0, count)
      .map((e) => (e as EventOf<'job:completed'>).durationMs / 1000)
      .sort((x, y) => x - y);
    if (durations.length < count) continue; // fewer events than counted: the counters' check says so
    for (const p of QUANTILES) {
      const rank = Math.max(1, Math.ceil(p * count));
      const i = le.findIndex(([, c]) => c >= rank);
      const [lo, hi] = [i > 0 ? le[i - 1][0] : 0, le[i][0]];
      const mine = durations[rank - 1];
      n++;
      if (!(mine > lo - 1e-9 && mine <= hi + 1e-9)) off.push({ metric: 'stampede_job_duration_seconds', worker, queue, outcome, quantile: p, bucket: `(${lo}, ${hi}]`, harness: mine });
    }
  }
  return n;
}

export const exportedMetricsAgree: CheckerDef<ExportedMetricsAgreeBounds> = {
  name: 'exported-metrics-agree',
  says: 'what Prometheus scraped equals what the harness saw at each scrape: queue-state gauges, RED counters per worker, duration quantiles within bucket resolution',
  check: checkExportedMetricsAgree,
  bounds: { lagMs: 'number', toleranceMs: 'number', estimateError: 'number' },
  defaults: { lagMs: 1_000, toleranceMs: 2, estimateError: 0.5 },
};
