// The invariants judged from a real Prometheus's answers (harness/checkers/prometheus-alerts.ts,
// exported-metrics-agree.ts, dashboard-queries-live.ts), on hand-written histories, and the pure
// parts of the runner's Prometheus (rule scaling, template variables).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkDashboardQueriesLive } from '../harness/checkers/dashboard-queries-live.ts';
import { checkExportedMetricsAgree } from '../harness/checkers/exported-metrics-agree.ts';
import { alertRows, checkPrometheusAlerts, prometheusAlerts } from '../harness/checkers/prometheus-alerts.ts';
import { prometheusAnswers } from '../harness/checkers/prometheus-answers.ts';
import { runCheckers } from '../harness/checkers/index.ts';
import { NO_ROWS, type HistoryEvent, type SampledQueue, type ScrapedSeries } from '../harness/history.ts';
import { substituteVariables } from '../harness/prometheus/readings.ts';
import { parseDuration, scaleRuleWindows } from '../harness/prometheus/rules.ts';
import { PROMETHEUS_INSTALL } from '../harness/prometheus/server.ts';
import { finalState } from './support/history-builder.ts';

const RULES = [
  { alert: 'StampedeOldestUnclaimedAgeOverSLO', forMs: 2_000, severity: 'page' },
  { alert: 'StampedeQueueStateStale', forMs: 5_000, severity: 'ticket' },
];
const started = (t = 0): HistoryEvent => ({
  t, node: 'harness', type: 'prometheus:started', rulesSource: 'ops/prometheus/alerts.yml', dashboardSource: 'ops/grafana/stampede.json',
  rules: RULES, scrapeIntervalMs: 1_000, evalIntervalMs: 1_000, alertForScale: 1 / 60,
});
const absent: HistoryEvent = { t: 0, node: 'harness', type: 'prometheus:absent', install: PROMETHEUS_INSTALL };

/** A sample whose harness reading says queue `orders` has these figures (the engine's own are not read here). */
function sample(t: number, orders: Partial<SampledQueue>): HistoryEvent {
  const q = { ...NO_ROWS, ...orders };
  return {
    t, node: 'sampler', type: 'sample', depthByQueue: {}, oldestUnclaimedAgeMs: {}, deadLetterDepth: q.deadLetters, claimed: q.claimed, done: 0, failed: q.failed, dead: 0,
    harness: { queues: { orders: q }, oldestUnclaimedAgeMs: { orders: q.oldestMs }, deadLetterDepth: q.deadLetters, xminAgeMs: 0, done: 0 },
  };
}
/** One sample a second from `from` to `to` s, the oldest due job `ageAt(t)` ms old. */
const samples = (from: number, to: number, ageAt: (t: number) => number) =>
  Array.from({ length: to - from + 1 }, (_, i) => sample((from + i) * 1000, { pending: 5, due: 5, oldestMs: ageAt((from + i) * 1000) }));
/** ALERTS as read back: firing (or pending) at every evaluation from `from` to `to` s. */
const alerts = (toT: number, ...series: { alert: string; queue?: string; state?: 'firing' | 'pending'; from: number; to: number }[]): HistoryEvent => ({
  t: toT, node: 'prometheus', type: 'prometheus:alerts', toT,
  series: series.map((s) => ({
    labels: { alertname: s.alert, ...(s.queue ? { queue: s.queue } : {}) },
    state: s.state ?? 'firing',
    at: Array.from({ length: s.to - s.from + 1 }, (_, i) => (s.from + i) * 1000),
  })),
});

const SLO = 'StampedeOldestUnclaimedAgeOverSLO';
const declared = { ...prometheusAlerts.defaults, mustFire: [SLO], mustResolve: [SLO] };
// The condition holds (age over 60 s) from 10 s to 20 s; the for: is 2 s.
const incident = samples(1, 30, (t) => (t >= 10_000 && t < 20_000 ? 90_000 : 10));

describe('prometheus-alerts', () => {
  it('is inconclusive without Prometheus, and says how to install it; never a pass', () => {
    const r = checkPrometheusAlerts([absent, ...incident], finalState([]), declared);
    expect(r.pass).toBe('unknown');
    expect(r.figure).toContain('apt-get install prometheus');
    expect(prometheusAnswers([], { name: 'x', bound: '' }, 'things')).toMatchObject({ pass: 'unknown' });
  });

  it('passes an alert that fires after its condition and for:, and resolves after recovery', () => {
    const r = checkPrometheusAlerts([started(), ...incident, alerts(31_000, { alert: SLO, queue: 'orders', from: 13, to: 20 })], finalState([]), declared);
    expect(r.pass).toBe(true);
    expect(r.figure).toContain(`${SLO}{orders} fired 3.0 s after its condition; resolved 1.0 s after recovery`);
    expect(r.judged.n).toBe(2 * 31);
  });

  it('fails an alert that never fires (a threshold written wrong), one that fires late, and one that never resolves', () => {
    const never = checkPrometheusAlerts([started(), ...incident, alerts(31_000)], finalState([]), declared);
    expect(never.pass).toBe(false);
    expect(never.examples).toEqual([expect.objectContaining({ alert: SLO, key: 'orders', problem: 'never fired' })]);
    const late = checkPrometheusAlerts([started(), ...incident, alerts(31_000, { alert: SLO, queue: 'orders', from: 18, to: 20 })], finalState([]), declared);
    expect(late.examples).toEqual([expect.objectContaining({ problem: 'fired 6.0 s after condition + for:' })]);
    const stuck = checkPrometheusAlerts([started(), ...incident, alerts(31_000, { alert: SLO, queue: 'orders', from: 13, to: 31 })], finalState([]), declared);
    expect(stuck.examples).toEqual([expect.objectContaining({ problem: 'still firing at the end, condition over at 20.0 s' })]);
  });

  it('fails a page before the condition has held for its for:, and one with no condition behind it', () => {
    const early = checkPrometheusAlerts([started(), ...incident, alerts(31_000, { alert: SLO, queue: 'orders', from: 8, to: 20 })], finalState([]), declared);
    expect(early.examples).toEqual([expect.objectContaining({ problem: 'fired 4.0 s before condition + for:' })]);
    const quiet = samples(1, 30, () => 10);
    const baseless = checkPrometheusAlerts([started(), ...quiet, alerts(31_000, { alert: SLO, queue: 'orders', from: 12, to: 14 })], finalState([]), { ...declared, mustFire: [], mustResolve: [], mayFire: [SLO] });
    expect(baseless.examples).toEqual([expect.objectContaining({ problem: 'fired at 12.0 s with no condition seen' })]);
  });

  it('fails any page the scenario does not declare (steady pages nobody), and passes a quiet run', () => {
    const quiet = samples(1, 30, () => 10);
    const bounds = prometheusAlerts.defaults;
    expect(checkPrometheusAlerts([started(), ...quiet, alerts(31_000)], finalState([]), bounds)).toMatchObject({ pass: true, judged: { n: 62 } });
    const paged = checkPrometheusAlerts([started(), ...quiet, alerts(31_000, { alert: 'StampedeQueueStateStale', from: 5, to: 5 })], finalState([]), bounds);
    expect(paged.pass).toBe(false);
    expect(paged.examples).toEqual([{ alert: 'StampedeQueueStateStale', key: '', problem: 'unexpected page at 5.0 s' }]);
    // Pending is not a page.
    expect(checkPrometheusAlerts([started(), ...quiet, alerts(31_000, { alert: 'StampedeQueueStateStale', state: 'pending', from: 5, to: 7 })], finalState([]), bounds).pass).toBe(true);
  });

  it('is inconclusive when a declared condition never held long enough to page, and false for a rule the file lacks', () => {
    const blip = samples(1, 30, (t) => (t === 10_000 ? 90_000 : 10));
    expect(checkPrometheusAlerts([started(), ...blip, alerts(31_000)], finalState([]), declared)).toMatchObject({ pass: 'unknown' });
    const renamed = checkPrometheusAlerts([started(), ...incident, alerts(31_000)], finalState([]), { ...declared, mustFire: ['StampedeNoSuchAlert'], mustResolve: [] });
    expect(renamed.examples).toEqual([{ alert: 'StampedeNoSuchAlert', problem: 'no such rule in ops/prometheus/alerts.yml' }]);
  });

  it('leaves a paused queue out of the SLO condition', () => {
    const paused: HistoryEvent = { t: 500, node: 'harness', type: 'queue:paused', queue: 'orders', by: 'op' };
    const r = checkPrometheusAlerts([started(), paused, ...incident, alerts(31_000)], finalState([]), { ...prometheusAlerts.defaults });
    expect(r.pass).toBe(true);
  });

  it('gives the report one row per condition: when the harness saw it, when Prometheus fired and resolved', () => {
    const history = [started(), ...incident, alerts(31_000, { alert: SLO, queue: 'orders', from: 13, to: 20 })];
    const answers = prometheusAnswers(history, { name: 'x', bound: '' }, 'x');
    expect(alertRows(history, answers as never)).toEqual([{ alert: SLO, key: 'orders', forMs: 2_000, conditionFromT: 10_000, conditionToT: 20_000, firedT: 13_000, resolvedT: 21_000 }]);
  });
});

const series = (labels: Record<string, string>, points: [number, number][]): ScrapedSeries => ({ labels, samples: points });
const scraped = (metric: string, list: ScrapedSeries[]): HistoryEvent => ({ t: 40_000, node: 'prometheus', type: 'prometheus:series', metric, series: list });
/** The sampler's gauges as scraped 200 ms after each of the samples, for queue orders. */
function gauges(history: HistoryEvent[], relabel = (l: Record<string, string>) => l): HistoryEvent[] {
  const at = history.filter((e): e is Extract<HistoryEvent, { type: 'sample' }> => e.type === 'sample');
  const points = (read: (q: SampledQueue) => number) => at.map((s): [number, number] => [s.t + 200, read(s.harness!.queues.orders)]);
  return [
    scraped('stampede_queue_depth', (['pending', 'failed', 'claimed'] as const).map((state) => series(relabel({ queue: 'orders', state, role: 'sampler' }), points((q) => q[state])))),
    scraped('stampede_queue_oldest_unclaimed_age_seconds', [series({ queue: 'orders', role: 'sampler' }, points((q) => q.oldestMs / 1000))]),
    scraped('stampede_dead_letter_depth', [series({ queue: 'orders', role: 'sampler' }, points((q) => q.deadLetters))]),
    scraped('stampede_queue_paused', [series({ queue: 'orders', role: 'sampler' }, points(() => 0))]),
  ];
}
const claimed = (t: number, workerId: string): HistoryEvent => ({ t, node: 'worker-0', type: 'job:claimed', jobId: t, queue: 'orders', priority: 0, attempt: 1, workerId, runAt: 0 });
const completed = (t: number, workerId: string, durationMs: number): HistoryEvent => ({ t, node: 'worker-0', type: 'job:completed', jobId: t, queue: 'orders', attempt: 1, workerId, durationMs });

describe('exported-metrics-agree', () => {
  const bounds = { lagMs: 1_000, toleranceMs: 2, estimateError: 0.5 };
  const five = samples(1, 5, (t) => t / 10);

  it('passes gauges that equal the harness reading of their round, at every scrape', () => {
    const r = checkExportedMetricsAgree([started(), ...five, ...gauges(five)], finalState([]), bounds);
    expect(r).toMatchObject({ pass: true, judged: { n: 30 } });
  });

  it('fails a gauge exported under the wrong labels (queue and state swapped), naming both ends', () => {
    const r = checkExportedMetricsAgree([started(), ...five, ...gauges(five, (l) => ({ ...l, queue: l.state, state: l.queue }))], finalState([]), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toContainEqual(expect.objectContaining({ metric: 'stampede_queue_depth', problem: 'a label value that is no queue state' }));
    expect(r.examples).toContainEqual(expect.objectContaining({ metric: 'stampede_queue_depth', queue: 'orders', problem: expect.stringContaining('no series') }));
  });

  it('fails a gauge off the harness reading', () => {
    const off = gauges(five);
    (off[1] as Extract<HistoryEvent, { type: 'prometheus:series' }>).series[0].samples[2][1] += 1;
    expect(checkExportedMetricsAgree([started(), ...five, ...off], finalState([]), bounds).examples).toEqual([
      expect.objectContaining({ metric: 'stampede_queue_oldest_unclaimed_age_seconds', t: 3_200, scraped: 1.3 }),
    ]);
  });

  it('holds a depth the engine marks estimated to the estimate error of the true depth, not to equality', () => {
    const marked = (value: number) =>
      scraped('stampede_queue_depth_estimated', [series({ queue: 'orders', role: 'sampler' }, five.map((e) => [e.t + 200, value] as [number, number]))]);
    // Every exported pending and failed depth 20 % over the truth (5 pending): fails as counted figures, holds as estimates, fails at 80 % over.
    const high = (by: number) =>
      gauges(five).map((e) => {
        const x = e as Extract<HistoryEvent, { type: 'prometheus:series' }>;
        if (x.metric !== 'stampede_queue_depth') return e;
        return { ...x, series: x.series.map((ser) => ({ ...ser, samples: ser.samples.map(([t, v]) => [t, ser.labels.state === 'claimed' ? v : v * by] as [number, number]) })) };
      });
    expect(checkExportedMetricsAgree([started(), ...five, ...high(1.2), marked(0)], finalState([]), bounds).pass).toBe(false);
    expect(checkExportedMetricsAgree([started(), ...five, ...high(1.2), marked(1)], finalState([]), bounds).pass).toBe(true);
    expect(checkExportedMetricsAgree([started(), ...five, ...high(1.8), marked(1)], finalState([]), bounds).pass).toBe(false);
  });

  it("holds each worker's counters between its own events up to lagMs either side of the scrape", () => {
    const events = [claimed(1_000, 'w1'), claimed(1_500, 'w1'), claimed(4_000, 'w1')];
    const counter = (values: [number, number][]) => scraped('stampede_jobs_claimed_total', [series({ queue: 'orders', worker: 'w1', role: 'worker' }, values)]);
    expect(checkExportedMetricsAgree([started(), ...events, counter([[2_000, 2], [3_500, 3], [6_000, 3]])], finalState([]), bounds)).toMatchObject({ pass: true, judged: { n: 3 } });
    const r = checkExportedMetricsAgree([started(), ...events, counter([[2_000, 2], [6_000, 5]])], finalState([]), bounds);
    expect(r.examples).toEqual([{ metric: 'stampede_jobs_claimed_total', series: 'w1/orders', t: 6_000, scraped: 5, events: 3 }]);
  });

  it("holds the duration histogram's quantiles to the bucket of the worker's own durations", () => {
    const events = [completed(1_000, 'w1', 3), completed(1_100, 'w1', 4), completed(1_200, 'w1', 40)];
    const buckets = (counts: [string, number][]) => scraped('stampede_job_duration_seconds_bucket', counts.map(([le, n]) => series({ le, queue: 'orders', outcome: 'completed', worker: 'w1', role: 'worker' }, [[2_000, n]])));
    expect(checkExportedMetricsAgree([started(), ...events, buckets([['0.005', 2], ['0.05', 3], ['+Inf', 3]])], finalState([]), bounds)).toMatchObject({ pass: true, judged: { n: 3 } });
    // The 40 ms job counted in the 5 ms bucket: p95 and p99 land a bucket low.
    const wrong = checkExportedMetricsAgree([started(), ...events, buckets([['0.005', 3], ['0.05', 3], ['+Inf', 3]])], finalState([]), bounds);
    expect(wrong.examples).toEqual([expect.objectContaining({ quantile: 0.95, bucket: '(0, 0.005]', harness: 0.04 }), expect.objectContaining({ quantile: 0.99 })]);
  });

  it('is inconclusive without Prometheus, or with nothing scraped', () => {
    expect(checkExportedMetricsAgree([absent, ...five], finalState([]), bounds).pass).toBe('unknown');
    expect(checkExportedMetricsAgree([started(), ...five], finalState([]), bounds).pass).toBe('unknown');
  });
});

const dashboard = (queries: { where: string; expr: string; series: number; error?: string }[], known = ['stampede_queue_depth', 'stampede_clock_skew_seconds']): HistoryEvent => ({
  t: 40_000, node: 'prometheus', type: 'prometheus:dashboard', source: 'ops/grafana/stampede.json', known,
  queries: queries.map((q) => ({ ...q, query: q.expr, points: q.series * 10 })),
});

describe('dashboard-queries-live', () => {
  const depth = { where: 'panel "Queue depth by state" target A', expr: 'max by (queue, state) (stampede_queue_depth{queue=~"$queue"})', series: 3 };
  const skew = { where: 'panel "Clock skew by node" target A', expr: 'max by (node) (stampede_clock_skew_seconds)', series: 0 };

  it('passes queries that return data, and declared-empty ones on metrics Prometheus knows', () => {
    expect(checkDashboardQueriesLive([started(), dashboard([depth, skew])], finalState([]), { mayBeEmpty: ['panel "Clock skew by node"'] })).toMatchObject({ pass: true, judged: { n: 2 } });
  });

  it('fails a panel on a renamed metric, an empty panel not declared, and a query Prometheus refuses', () => {
    const renamed = { ...depth, expr: 'max by (queue) (stampede_dead_letters_depth{queue=~"$queue"})', series: 0 };
    const r = checkDashboardQueriesLive([started(), dashboard([renamed, skew, { ...depth, error: 'parse error', series: 0 }])], finalState([]), { mayBeEmpty: [] });
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([
      expect.objectContaining({ problem: 'selects stampede_dead_letters_depth, which Prometheus never scraped' }),
      expect.objectContaining({ where: skew.where, problem: 'returned no data over the run' }),
      expect.objectContaining({ problem: 'Prometheus refused it: parse error' }),
    ]);
    // Declared empty is no excuse for a metric that does not exist.
    expect(checkDashboardQueriesLive([started(), dashboard([renamed])], finalState([]), { mayBeEmpty: [depth.where] }).pass).toBe(false);
  });

  it('is inconclusive without Prometheus (runCheckers never makes it a pass)', () => {
    const [r] = runCheckers(['dashboard-queries-live'], [absent], finalState([]));
    expect(r.pass).toBe('unknown');
  });
});

describe('the rules the runner loads', () => {
  const shipped = readFileSync(new URL('../ops/prometheus/alerts.yml', import.meta.url), 'utf8');

  it('scales every for: and changes nothing else, byte for byte', () => {
    const { text, rules } = scaleRuleWindows(shipped, 1 / 60, 'alerts.yml');
    expect(rules.find((r) => r.alert === SLO)).toEqual({ alert: SLO, forMs: 2_000, severity: 'page' });
    expect(rules.find((r) => r.alert === 'StampedeDeadLetteringFast')?.forMs).toBe(0);
    const changed = shipped.split('\n').map((line, i) => [line, text.split('\n')[i]]).filter(([a, b]) => a !== b);
    expect(changed.length).toBe(rules.filter((r) => r.forMs > 0).length);
    for (const [before, after] of changed) expect(before.replace(/for: \w+$/, 'for: X')).toBe(after.replace(/for: \d+ms$/, 'for: X'));
  });

  it('parses Prometheus durations, and refuses what is not one, naming the rule', () => {
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('500ms')).toBe(500);
    expect(() => parseDuration('2 minutes')).toThrow('"2 minutes" is not a Prometheus duration');
    expect(() => scaleRuleWindows('groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up\n        for: soon\n', 1, 'mine.yml')).toThrow('mine.yml: rule A: for: "soon" is not');
    expect(() => scaleRuleWindows('rules: []\n', 1, 'mine.yml')).toThrow('mine.yml: expected a top-level "groups" list');
  });

  it("substitutes Grafana's variables as Grafana does for All", () => {
    const d = { templating: { list: [{ name: 'queue', type: 'query', allValue: '.*' }, { name: 'datasource', type: 'datasource' }] } };
    expect(substituteVariables('rate(x{queue=~"$queue"}[$__rate_interval])', d, 1_000, ['a', 'b'])).toBe('rate(x{queue=~".*"}[4s])');
    const noAll = { templating: { list: [{ name: 'queue', type: 'query' }] } };
    expect(substituteVariables('x{queue=~"${queue}"}', noAll, 1_000, ['a', 'b'])).toBe('x{queue=~"(a|b)"}');
  });
});
