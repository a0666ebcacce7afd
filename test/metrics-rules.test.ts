import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { editText } from '../harness/prometheus/ops-files.ts';
import { scaleRuleWindows } from '../harness/prometheus/rules.ts';
import { MUTANTS } from '../harness/mutants/index.ts';
import { parse } from 'yaml';
import { parser as promqlParser } from '@prometheus-io/lezer-promql';
import { createMetrics, exportedSeriesNames } from '../engine/metrics/registry.ts';
import { expressionsInDashboard, expressionsInRules, metricNamesInPromQL, unknownMetricReferences } from '../engine/metrics/rule-check.ts';

const rulesText = readFileSync(new URL('../ops/prometheus/alerts.yml', import.meta.url), 'utf8');
const dashboardText = readFileSync(new URL('../ops/grafana/stampede.json', import.meta.url), 'utf8');
const known = exportedSeriesNames(createMetrics().registry);

/** Brackets of every kind balance and nest: the cheapest syntax check a PromQL string can fail. */
function balanced(expr: string): boolean {
  const stack: string[] = [];
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  for (const ch of expr.replace(/"(?:[^"\\]|\\.)*"/g, '')) {
    if ('([{'.includes(ch)) stack.push(ch);
    else if (ch in pairs && stack.pop() !== pairs[ch]) return false;
  }
  return stack.length === 0;
}

/**
 * Parses with Prometheus's own PromQL grammar (the one its UI uses): the
 * syntax errors, and the metric names of its vector selectors. Grafana
 * variables are substituted first, as Grafana does before sending a query.
 */
function grammarParse(expr: string): { errors: number[]; names: string[] } {
  const text = expr.replaceAll('$__rate_interval', '5m').replace(/\$\{?\w+\}?/g, '.*');
  const errors: number[] = [];
  const names = new Set<string>();
  promqlParser.parse(text).iterate({
    enter(n) {
      if (n.type.isError) errors.push(n.from);
      if (n.name === 'VectorSelector') {
        const id = n.node.getChild('Identifier');
        if (id) names.add(text.slice(id.from, id.to));
      }
    },
  });
  return { errors, names: [...names].sort() };
}

/** Every expression parses under the real grammar, and the lexical reader finds exactly the grammar's metric names. */
function expectValidPromQL(expressions: { where: string; expr: string }[]): void {
  for (const { where, expr } of expressions) {
    const g = grammarParse(expr);
    expect({ where, errors: g.errors, names: g.names }).toEqual({ where, errors: [], names: metricNamesInPromQL(expr).sort() });
  }
}

describe('metricNamesInPromQL', () => {
  it.each([
    ['max by (queue) (stampede_queue_oldest_unclaimed_age_seconds) > 60', ['stampede_queue_oldest_unclaimed_age_seconds']],
    ['sum(rate(a_total{queue=~"$queue",x="y{z}"}[5m])) / clamp_min(sum(rate(b_total[$__rate_interval])), 1e-9)', ['a_total', 'b_total']],
    ['histogram_quantile(0.95, sum by (le) (rate(h_bucket[5m] offset 1h)))', ['h_bucket']],
    ['time() - max(ts_seconds) > 120 or absent(ts_seconds)', ['ts_seconds']],
    ['a > bool 1 and on (queue) group_left (node) b unless ignoring (x) c', ['a', 'b', 'c']],
    ['deriv(depth[15m:1m]) > 0', ['depth']],
  ])('%s', (expr, names) => {
    expect(metricNamesInPromQL(expr).sort()).toEqual([...names].sort());
    expect(grammarParse(expr)).toEqual({ errors: [], names: [...names].sort() });
  });

  it('negative control: the grammar check catches a syntax error', () => {
    expect(grammarParse('max by (queue (stampede_queue_depth) > 60').errors.length).toBeGreaterThan(0);
    expect(grammarParse('rate(stampede_jobs_claimed_total[5m)').errors.length).toBeGreaterThan(0);
  });
});

describe('ops/prometheus/alerts.yml', () => {
  const doc = parse(rulesText);
  const rules = doc.groups.flatMap((g: any) => g.rules);
  const byName = (name: string) => rules.find((r: any) => r.alert === name);

  it('parses, and every rule is complete: balanced expression, valid for:, severity and summary', () => {
    expect(rules.length).toBeGreaterThanOrEqual(4);
    for (const r of rules) {
      expect({ alert: r.alert, balanced: balanced(r.expr) }).toEqual({ alert: r.alert, balanced: true });
      if (r.for !== undefined) expect(r.for).toMatch(/^\d+[smhdwy]$/);
      expect(['page', 'ticket']).toContain(r.labels?.severity);
      expect(typeof r.annotations?.summary).toBe('string');
    }
  });

  it('references only metrics the registry exports, in expressions that parse as PromQL', () => {
    const expressions = expressionsInRules(doc);
    expect(expressions).toHaveLength(rules.length);
    expectValidPromQL(expressions);
    expect(unknownMetricReferences(expressions, known)).toEqual([]);
  });

  it('has the alerts the issue asks for, on the right signals', () => {
    const slo = byName('StampedeOldestUnclaimedAgeOverSLO');
    // A paused queue waits on purpose: the SLO alert leaves it out, and a pause left on has its own alert.
    expect(metricNamesInPromQL(slo.expr)).toEqual(['stampede_queue_oldest_unclaimed_age_seconds', 'stampede_queue_paused']);
    expect(slo.expr).toMatch(/> 60\s+unless on \(queue\) max by \(queue\) \(stampede_queue_paused\) == 1$/);
    expect(metricNamesInPromQL(byName('StampedeQueuePausedWithBacklog').expr)).toContain('stampede_queue_paused');
    const dlq = byName('StampedeDeadLetterDepthRising');
    expect(dlq.expr).toMatch(/(deriv|increase)\(stampede_dead_letter_depth\[/);
    expect(metricNamesInPromQL(byName('StampedeXminHorizonOld').expr)).toEqual(['stampede_pg_xmin_horizon_age_seconds']);
    expect(metricNamesInPromQL(byName('StampedeJobsDeadTuplesHigh').expr)).toContain('stampede_pg_jobs_dead_tuples');
  });

  it('negative control: a rule on a made-up metric is caught by the same check', () => {
    const bad = parse(rulesText);
    bad.groups[0].rules.push({ alert: 'Typo', expr: 'max(stampede_queue_oldest_unclaimed_age_secs) > 60', labels: { severity: 'page' } });
    expect(unknownMetricReferences(expressionsInRules(bad), known)).toEqual([
      { where: 'rule Typo', metric: 'stampede_queue_oldest_unclaimed_age_secs' },
    ]);
  });

  it('refuses a document that is not a rules file, naming what is missing', () => {
    expect(() => expressionsInRules({ rules: [] })).toThrow('groups');
    expect(() => expressionsInRules({ groups: [{ name: 'g', rules: [{ alert: 'A' }] }] })).toThrow('rule A: expected a non-empty "expr"');
  });
});

describe('ops/grafana/stampede.json', () => {
  const dashboard = JSON.parse(dashboardText);

  it('references only metrics the registry exports, in every panel and variable, in queries that parse as PromQL', () => {
    const expressions = expressionsInDashboard(dashboard);
    expectValidPromQL(expressions);
    expect(expressions.length).toBeGreaterThanOrEqual(20);
    expect(expressions.some((e) => e.where === 'variable queue')).toBe(true);
    for (const e of expressions) expect({ where: e.where, balanced: balanced(e.expr) }).toEqual({ where: e.where, balanced: true });
    expect(unknownMetricReferences(expressions, known)).toEqual([]);
  });

  it('has panels for every signal the issue lists, and the SLO line at the alert threshold', () => {
    const used = new Set(expressionsInDashboard(dashboard).flatMap((e) => metricNamesInPromQL(e.expr)));
    for (const metric of [
      'stampede_queue_depth',
      'stampede_queue_oldest_unclaimed_age_seconds',
      'stampede_dead_letter_depth',
      'stampede_jobs_claimed_total',
      'stampede_jobs_completed_total',
      'stampede_jobs_failed_total',
      'stampede_job_duration_seconds_bucket',
      'stampede_clock_skew_seconds',
      'stampede_pg_jobs_dead_tuples',
      'stampede_pg_xmin_horizon_age_seconds',
    ]) {
      expect(used).toContain(metric);
    }
    const slo = dashboard.panels.find((p: any) => p.title.startsWith('Oldest unclaimed age'));
    expect(slo.fieldConfig.defaults.thresholds.steps.map((s: any) => s.value)).toContain(60);
    const ids = dashboard.panels.map((p: any) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('negative control: a panel on a made-up metric is caught by the same check', () => {
    const bad = JSON.parse(dashboardText);
    bad.panels.push({ id: 999, title: 'Typo', targets: [{ refId: 'A', expr: 'sum(rate(stampede_jobs_claim_total[5m]))' }] });
    expect(unknownMetricReferences(expressionsInDashboard(bad), known)).toEqual([
      { where: 'panel "Typo" target A', metric: 'stampede_jobs_claim_total' },
    ]);
  });
});

/** promtool on PATH (Debian's prometheus package brings it; CI installs it): the rule tests run only where it is. */
const promtool = spawnSync('promtool', ['--version']).status === 0;

describe.skipIf(!promtool)('promtool (ops/prometheus/alerts.test.yml)', () => {
  /** Runs promtool on a copy of the rules and their tests, with the rules text given; its exit status and output. */
  function promtoolOn(rules: string, args: (dir: string) => string[]): { status: number | null; out: string } {
    const dir = mkdtempSync(join(tmpdir(), 'stampede-promtool-'));
    try {
      writeFileSync(join(dir, 'alerts.yml'), rules);
      copyFileSync(new URL('../ops/prometheus/alerts.test.yml', import.meta.url), join(dir, 'alerts.test.yml'));
      const r = spawnSync('promtool', args(dir), { encoding: 'utf8' });
      return { status: r.status, out: r.stdout + r.stderr };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('passes the shipped rule tests: a firing and a quiet case for every rule', () => {
    const r = promtoolOn(rulesText, (dir) => ['test', 'rules', join(dir, 'alerts.test.yml')]);
    expect(r.out).toContain('SUCCESS');
    expect(r.status).toBe(0);
    const tested = new Set([...readFileSync(new URL('../ops/prometheus/alerts.test.yml', import.meta.url), 'utf8').matchAll(/alertname: (\w+)/g)].map((m) => m[1]));
    expect([...tested].sort()).toEqual(parse(rulesText).groups.flatMap((g: any) => g.rules.map((r: any) => r.alert)).sort());
  });

  it('negative control: the same tests fail on the rules with the SLO threshold written in ms (the slo-rule-in-ms mutant)', () => {
    const change = MUTANTS['slo-rule-in-ms'].changes[0];
    if (change.kind !== 'ops-file') throw new Error('slo-rule-in-ms: expected an ops-file change');
    const r = promtoolOn(editText('slo-rule-in-ms', 'alerts.yml', rulesText, change.edits), (dir) => ['test', 'rules', join(dir, 'alerts.test.yml')]);
    expect(r.status).not.toBe(0);
    expect(r.out).toContain('StampedeOldestUnclaimedAgeOverSLO');
  });

  it("loads what the scenario runner's Prometheus loads: the rules with every for: scaled", () => {
    const r = promtoolOn(scaleRuleWindows(rulesText, 1 / 60, 'alerts.yml').text, (dir) => ['check', 'rules', join(dir, 'alerts.yml')]);
    expect(r.out).toContain(`SUCCESS: ${parse(rulesText).groups.flatMap((g: any) => g.rules).length} rules found`);
  });
});
