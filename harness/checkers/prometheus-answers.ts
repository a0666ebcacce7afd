import type { EventOf, HistoryEvent, InvariantResult, ScrapedSeries } from '../history.ts';

/** What the run's Prometheus answered, as the runner recorded it (harness/runner/prometheus.ts). */
export interface PrometheusAnswers {
  started: EventOf<'prometheus:started'>;
  alerts?: EventOf<'prometheus:alerts'>;
  series: Map<string, ScrapedSeries[]>;
  dashboard?: EventOf<'prometheus:dashboard'>;
}

/**
 * The run's Prometheus answers, or the inconclusive result an invariant that
 * reads them gives when there are none: no binary on this machine (with the
 * command that installs one), a Prometheus that failed, or a history from
 * before the runner had one. Never a pass.
 */
export function prometheusAnswers(
  history: readonly HistoryEvent[],
  base: { name: string; bound: string },
  what: string,
): PrometheusAnswers | InvariantResult {
  let started: EventOf<'prometheus:started'> | undefined;
  let alerts: EventOf<'prometheus:alerts'> | undefined;
  let dashboard: EventOf<'prometheus:dashboard'> | undefined;
  const series = new Map<string, ScrapedSeries[]>();
  const unknown = (figure: string): InvariantResult => ({ ...base, pass: 'unknown', figure, judged: { n: 0, what } });
  for (const e of history) {
    if (e.type === 'prometheus:absent') return { ...unknown(`no Prometheus on this machine, nothing to judge; install it: ${e.install}`), notHere: e.install };
    if (e.type === 'prometheus:failed') return unknown(`the run's Prometheus failed: ${e.error}`);
    if (e.type === 'prometheus:started') started = e;
    if (e.type === 'prometheus:alerts') alerts = e;
    if (e.type === 'prometheus:series') series.set(e.metric, e.series);
    if (e.type === 'prometheus:dashboard') dashboard = e;
  }
  if (!started) return unknown('the run had no Prometheus (a history recorded before the runner started one): nothing to judge');
  return { started, ...(alerts ? { alerts } : {}), series, ...(dashboard ? { dashboard } : {}) };
}

export function isAnswers(a: PrometheusAnswers | InvariantResult): a is PrometheusAnswers {
  return 'started' in a;
}

/** Seconds with a decimal, for figures: "12.3 s". */
export function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
