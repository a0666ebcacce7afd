import { expressionsInDashboard } from '../../engine/metrics/rule-check.ts';
import type { ScrapedSeries } from '../history.ts';
import type { Recordable } from '../runner/recorder.ts';
import { PrometheusQueryError, type ApiSeries, type PrometheusServer } from './server.ts';

/** The span of the run Prometheus saw, in epoch ms, and how its times become the history's t. */
export interface ReadWindow {
  fromMs: number;
  toMs: number;
  /** History t of an epoch-ms instant. */
  toT: (epochMs: number) => number;
}

/**
 * The metrics the runner reads back for exported-metrics-agree, and from
 * which process: the queue-state gauges from the runner's sampler, the RED
 * counters and the duration histogram from the workers. `last`: only each
 * series' last sample is kept (the histogram's buckets, judged at the end).
 */
export const READ_BACK: readonly { metric: string; role: 'sampler' | 'worker'; last?: true }[] = [
  { metric: 'stampede_queue_depth', role: 'sampler' },
  { metric: 'stampede_queue_oldest_unclaimed_age_seconds', role: 'sampler' },
  { metric: 'stampede_dead_letter_depth', role: 'sampler' },
  { metric: 'stampede_queue_paused', role: 'sampler' },
  // Which depths the engine marks as estimates past its row budget: those are held to the estimate's error, not equality.
  { metric: 'stampede_queue_depth_estimated', role: 'sampler' },
  { metric: 'stampede_dead_letter_depth_estimated', role: 'sampler' },
  { metric: 'stampede_jobs_claimed_total', role: 'worker' },
  { metric: 'stampede_jobs_completed_total', role: 'worker' },
  { metric: 'stampede_jobs_failed_total', role: 'worker' },
  { metric: 'stampede_jobs_dead_lettered_total', role: 'worker' },
  { metric: 'stampede_job_duration_seconds_bucket', role: 'worker', last: true },
  // Whether each scrape of the sampler succeeded: a gap in its gauges is a failed scrape, not a missing figure.
  { metric: 'up', role: 'sampler' },
];

/** `[Ns]` covering the window, for a range selector evaluated at its end. */
function rangeOf(w: ReadWindow): string {
  return `[${Math.ceil((w.toMs - w.fromMs) / 1000) + 1}s]`;
}

const labelsOf = (s: ApiSeries) => Object.fromEntries(Object.entries(s.metric).filter(([k]) => k !== '__name__'));

/** Every alert series Prometheus recorded over the run (the ALERTS metric): which state, at which evaluations. */
export async function readAlerts(server: PrometheusServer, w: ReadWindow): Promise<Recordable> {
  const result = await server.query(`ALERTS${rangeOf(w)}`, w.toMs / 1000);
  return {
    type: 'prometheus:alerts',
    node: 'prometheus',
    toT: w.toT(w.toMs),
    series: result.map((s) => {
      const { alertstate, ...labels } = labelsOf(s);
      return { labels, state: alertstate === 'firing' ? ('firing' as const) : ('pending' as const), at: (s.values ?? []).map(([ts]) => w.toT(ts * 1000)) };
    }),
  };
}

/** Every sample of one metric scraped from processes of `role` over the run, as Prometheus stored it. */
export async function readSeries(server: PrometheusServer, w: ReadWindow, metric: string, role: string, lastOnly = false): Promise<Recordable> {
  const result = await server.query(`${metric}{role="${role}"}${rangeOf(w)}`, w.toMs / 1000);
  const series: ScrapedSeries[] = result.map((s) => {
    const samples = (s.values ?? []).map(([ts, v]): [number, number] => [w.toT(ts * 1000), Number(v)]);
    return { labels: labelsOf(s), samples: lastOnly ? samples.slice(-1) : samples };
  });
  return { type: 'prometheus:series', node: 'prometheus', metric, series };
}

/** Grafana's substitutions for a query over the run: the built-in intervals, and each query variable at its "All". */
export function substituteVariables(expr: string, dashboard: unknown, scrapeIntervalMs: number, queues: readonly string[]): string {
  const scrapeS = scrapeIntervalMs / 1000;
  // Grafana's $__rate_interval: max(4 x scrape interval, step + scrape interval); the step here is one scrape interval.
  let out = expr.replaceAll('$__rate_interval', `${4 * scrapeS}s`).replaceAll('$__interval', `${scrapeS}s`);
  const vars = ((dashboard as { templating?: { list?: any[] } }).templating?.list ?? []).filter((v) => v?.type === 'query');
  for (const v of vars) {
    const all = typeof v.allValue === 'string' && v.allValue !== '' ? v.allValue : `(${queues.join('|')})`;
    out = out.replace(new RegExp(`\\$\\{${v.name}(?::\\w+)?\\}|\\$${v.name}\\b`, 'g'), all);
  }
  return out;
}

/**
 * Every query of the dashboard, run over the run as Grafana would run it
 * (range queries, one point per scrape interval), and the metric names
 * Prometheus knows (its series and its targets' metadata): what
 * dashboard-queries-live judges.
 */
export async function readDashboard(
  server: PrometheusServer,
  w: ReadWindow,
  dashboardText: string,
  source: string,
  scrapeIntervalMs: number,
  queues: readonly string[],
): Promise<Recordable> {
  const dashboard = JSON.parse(dashboardText) as unknown;
  const queries = [];
  for (const { where, expr } of expressionsInDashboard(dashboard)) {
    const query = substituteVariables(expr, dashboard, scrapeIntervalMs, queues);
    try {
      const result = await server.queryRange(query, w.fromMs / 1000, w.toMs / 1000, scrapeIntervalMs / 1000);
      queries.push({ where, expr, query, series: result.length, points: result.reduce((n, s) => n + (s.values?.length ?? 0), 0) });
    } catch (err) {
      if (!(err instanceof PrometheusQueryError)) throw err;
      queries.push({ where, expr, query, error: err.reason, series: 0, points: 0 });
    }
  }
  const names = await server.api<string[]>('/api/v1/label/__name__/values');
  const metadata = await server.api<Record<string, unknown>>('/api/v1/metadata');
  const known = [...new Set([...names, ...Object.keys(metadata)])].sort();
  return { type: 'prometheus:dashboard', node: 'prometheus', source, known, queries };
}
