import { metricNamesInPromQL } from '../../engine/metrics/rule-check.ts';
import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { isAnswers, prometheusAnswers } from './prometheus-answers.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface DashboardQueriesLiveBounds {
  /**
   * Queries the scenario cannot give data (a panel on queue limits where it sets none): each
   * entry matches the queries whose place contains it (`panel "Clock skew by node"`,
   * `panel "In flight vs global limit" target B`). They must still parse and select metrics
   * Prometheus knows. Default [].
   */
  mayBeEmpty: string[];
}

/**
 * Every query of the Grafana dashboard operators import, run against the
 * run's Prometheus over the run (template variables substituted as Grafana
 * does), parses, selects only metrics Prometheus has scraped (series or
 * metadata), and returns data, unless the scenario says it cannot
 * (`mayBeEmpty`). A panel on a metric that no longer exists fails. Unknown
 * without Prometheus.
 */
export function checkDashboardQueriesLive(history: readonly HistoryEvent[], _final: FinalState, b: DashboardQueriesLiveBounds): InvariantResult {
  const base = { name: 'dashboard-queries-live', bound: `every query parses, selects scraped metrics and returns data${b.mayBeEmpty.length ? ` (may be empty: ${b.mayBeEmpty.join('; ')})` : ''}` };
  const what = 'dashboard queries';
  const answers = prometheusAnswers(history, base, what);
  if (!isAnswers(answers)) return answers;
  const d = answers.dashboard;
  if (!d) return { ...base, pass: 'unknown', figure: 'the dashboard was never queried (the run ended early)', judged: { n: 0, what } };
  const known = new Set(d.known);
  const problems: Record<string, unknown>[] = [];
  let empty = 0;
  for (const q of d.queries) {
    if (q.error !== undefined) {
      problems.push({ where: q.where, query: q.query, problem: `Prometheus refused it: ${q.error}` });
      continue;
    }
    const missing = metricNamesInPromQL(q.expr).filter((m) => !known.has(m));
    if (missing.length) problems.push({ where: q.where, problem: `selects ${missing.join(', ')}, which Prometheus never scraped` });
    else if (q.series === 0 && b.mayBeEmpty.some((m) => q.where.includes(m))) empty++;
    else if (q.series === 0) problems.push({ where: q.where, query: q.query, problem: 'returned no data over the run' });
  }
  const figure = `${fmt(d.queries.length - problems.length)} of ${fmt(d.queries.length)} queries of ${d.source} live${empty ? ` (${fmt(empty)} empty, as declared)` : ''}`;
  return { ...base, pass: problems.length === 0, figure, judged: { n: d.queries.length, what }, ...(problems.length ? { examples: firstN(problems) } : {}) };
}

export const dashboardQueriesLive: CheckerDef<DashboardQueriesLiveBounds> = {
  name: 'dashboard-queries-live',
  says: "every query of the Grafana dashboard, run against the run's Prometheus, parses, selects metrics it scraped and returns data",
  check: checkDashboardQueriesLive,
  bounds: { mayBeEmpty: 'string[]' },
  defaults: { mayBeEmpty: [] },
};
