import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { ALERT_CONDITIONS, conditionSpans, type ConditionSpan } from './alert-conditions.ts';
import { isAnswers, prometheusAnswers, secs, type PrometheusAnswers } from './prometheus-answers.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface PrometheusAlertsBounds {
  /** Alerts (rule names) the scenario's incident must page: each fires within the bound after its condition has held for its for:. Default []. */
  mustFire: string[];
  /** Of those, the ones that must resolve within the bound once the harness sees their condition end. Default []. */
  mustResolve: string[];
  /** Other alerts the scenario may set off; any alert not declared here or in mustFire is an unexpected page. Default []. */
  mayFire: string[];
  /** After the condition started plus the rule's (scaled) for:, how long Prometheus may take to fire, ms. Default 5,000. */
  fireWithinMs: number;
  /** After the harness saw the condition end, how long Prometheus may take to resolve, ms. Default 5,000. */
  resolveWithinMs: number;
  /** How much before condition + for: a firing is still on time (the harness samples once a second), ms. Default 1,000. */
  earlyMs: number;
}

/** One stretch of an alert series' firing: its first and last firing evaluation, and when it resolved (null: firing at the end). */
export interface Firing {
  alert: string;
  key: string;
  fromT: number;
  lastT: number;
  resolvedT: number | null;
}

/** Per alert, key, and condition span: when the harness saw it, when Prometheus fired and resolved. For the checker and the report. */
export interface AlertRow {
  alert: string;
  key: string;
  forMs: number;
  conditionFromT: number | null;
  conditionToT: number | null;
  firedT: number | null;
  resolvedT: number | null;
}

/** The firing stretches of every alert, from Prometheus's ALERTS: evaluations more than 2.5 intervals apart start a new stretch. */
export function firings(answers: PrometheusAnswers): Firing[] {
  const evalMs = answers.started.evalIntervalMs;
  const out: Firing[] = [];
  for (const s of answers.alerts?.series ?? []) {
    if (s.state !== 'firing') continue;
    const alert = s.labels.alertname;
    const keyLabel = ALERT_CONDITIONS[alert]?.key;
    const key = keyLabel ? (s.labels[keyLabel] ?? '') : '';
    const at = [...s.at].sort((a, b) => a - b);
    let cur: Firing | undefined;
    for (const t of at) {
      if (cur && t - cur.lastT <= 2.5 * evalMs) cur.lastT = t;
      else out.push((cur = { alert, key, fromT: t, lastT: t, resolvedT: null }));
    }
  }
  // Resolved at the evaluation after its last firing one, unless that is where the record ends.
  const toT = answers.alerts?.toT ?? 0;
  for (const f of out) f.resolvedT = f.lastT + 2.5 * evalMs < toT ? f.lastT + evalMs : null;
  return out;
}

/** The firing of (alert, key) that answers a condition span: the first that overlaps it, from its start to the bound after it. */
function answering(fs: readonly Firing[], span: ConditionSpan, untilT: number): Firing | undefined {
  return fs.find((f) => f.key === span.key && (f.resolvedT ?? Infinity) > span.fromT && f.fromT <= untilT);
}

/**
 * When each alert's condition held by the harness's own figures, and when
 * Prometheus fired and resolved it: one row per condition span (and one per
 * firing no span explains). Pure; the report's alert section reads it too.
 */
export function alertRows(history: readonly HistoryEvent[], answers: PrometheusAnswers): AlertRow[] {
  const fs = firings(answers);
  const rows: AlertRow[] = [];
  const explained = new Set<Firing>();
  for (const rule of answers.started.rules) {
    const mine = fs.filter((f) => f.alert === rule.alert);
    for (const span of conditionSpans(history, rule.alert)) {
      const f = answering(mine, span, (span.toT ?? Infinity) + rule.forMs);
      if (f) explained.add(f);
      rows.push({ alert: rule.alert, key: span.key, forMs: rule.forMs, conditionFromT: span.fromT, conditionToT: span.toT, firedT: f?.fromT ?? null, resolvedT: f?.resolvedT ?? null });
    }
    for (const f of mine) {
      if (!explained.has(f)) rows.push({ alert: rule.alert, key: f.key, forMs: rule.forMs, conditionFromT: null, conditionToT: null, firedT: f.fromT, resolvedT: f.resolvedT });
    }
  }
  return rows.sort((a, b) => (a.conditionFromT ?? a.firedT ?? 0) - (b.conditionFromT ?? b.firedT ?? 0));
}

/**
 * The alert rules operators deploy, evaluated by a real Prometheus on the
 * metrics the run exported, page when the harness's own figures say they
 * should and stop when they say the incident is over. For each alert the
 * scenario declares (mustFire): every span over which the harness saw its
 * condition (alert-conditions.ts) hold long enough to page makes Prometheus
 * fire within `fireWithinMs` after start + for:, and not more than `earlyMs`
 * before; for mustResolve, once the condition ends it resolves within
 * `resolveWithinMs`. Any alert that fires and is not declared (mustFire,
 * mayFire) is an unexpected page: `steady` pages nobody. Judged from
 * Prometheus's ALERTS as the runner read them at the end of the run.
 * Unknown without Prometheus, or when a declared alert's condition never held
 * long enough to page.
 */
export function checkPrometheusAlerts(history: readonly HistoryEvent[], _final: FinalState, b: PrometheusAlertsBounds): InvariantResult {
  const base = {
    name: 'prometheus-alerts',
    bound: `fire: ${b.mustFire.join(', ') || 'none'} within ${secs(b.fireWithinMs)} of condition + for:; resolve: ${b.mustResolve.join(', ') || 'none'} within ${secs(b.resolveWithinMs)} of recovery; no other page${b.mayFire.length ? ` but ${b.mayFire.join(', ')}` : ''}`,
  };
  const what = 'rule evaluations';
  const answers = prometheusAnswers(history, base, what);
  if (!isAnswers(answers)) return answers;
  if (!answers.alerts) return { ...base, pass: 'unknown', figure: "Prometheus's ALERTS were never read (the run ended early)", judged: { n: 0, what } };
  const rules = new Map(answers.started.rules.map((r) => [r.alert, r]));
  const problems: Record<string, unknown>[] = [];
  const unjudged: string[] = [];
  const said: string[] = [];
  for (const alert of new Set([...b.mustFire, ...b.mustResolve])) {
    if (!rules.has(alert)) problems.push({ alert, problem: `no such rule in ${answers.started.rulesSource}` });
    else if (!ALERT_CONDITIONS[alert]) unjudged.push(`${alert}: the harness has no condition for it`);
  }
  const fs = firings(answers);
  for (const f of fs) {
    if (!b.mustFire.includes(f.alert) && !b.mayFire.includes(f.alert)) problems.push({ alert: f.alert, key: f.key, problem: `unexpected page at ${secs(f.fromT)}` });
  }
  const rows = alertRows(history, answers);
  // The harness's condition spans sampling rounds, and the gauge Prometheus reads is set by the same rounds:
  // a span from one round to the round that ended it was true in Prometheus for as long, less up to one
  // scrape at its start, and firing needs evaluations a whole for: apart, so up to one evaluation more.
  // A condition that held for: plus a scrape and an evaluation had to page; a shorter one may end before
  // it could, and is not a case for the alert.
  const lagMs = answers.started.scrapeIntervalMs + answers.started.evalIntervalMs;
  for (const alert of b.mustFire) {
    const rule = rules.get(alert);
    if (!rule || !ALERT_CONDITIONS[alert]) continue;
    const lastT = answers.alerts.toT;
    const telling = rows.filter((r) => r.alert === alert && r.conditionFromT !== null && (r.conditionToT ?? lastT) - r.conditionFromT! >= rule.forMs + lagMs);
    if (telling.length === 0) unjudged.push(`${alert}: its condition never held ${secs(rule.forMs + lagMs)} in a row (for:, a scrape and an evaluation)`);
    for (const r of telling) {
      const due = r.conditionFromT! + rule.forMs;
      const where = { alert, key: r.key, conditionAt: secs(r.conditionFromT!), forMs: rule.forMs };
      if (r.firedT === null || r.firedT > due + b.fireWithinMs) problems.push({ ...where, problem: r.firedT === null ? 'never fired' : `fired ${secs(r.firedT - due)} after condition + for:` });
      else if (r.firedT < due - b.earlyMs) problems.push({ ...where, problem: `fired ${secs(due - r.firedT)} before condition + for:` });
      else said.push(`${alert}${r.key ? `{${r.key}}` : ''} fired ${secs(r.firedT - r.conditionFromT!)} after its condition`);
      if (!b.mustResolve.includes(alert) || r.firedT === null) continue;
      if (r.conditionToT === null) unjudged.push(`${alert}${r.key ? `{${r.key}}` : ''}: its condition held to the end, so no resolution to judge`);
      else if (r.resolvedT === null || r.resolvedT > r.conditionToT + b.resolveWithinMs) {
        problems.push({ ...where, problem: r.resolvedT === null ? `still firing at the end, condition over at ${secs(r.conditionToT)}` : `resolved ${secs(r.resolvedT - r.conditionToT)} after recovery` });
      } else said.push(`resolved ${secs(r.resolvedT - r.conditionToT)} after recovery`);
    }
  }
  // Every firing of an alert the harness can judge must have its condition behind it (not a page on nothing).
  for (const r of rows) if (r.conditionFromT === null && r.firedT !== null && ALERT_CONDITIONS[r.alert]) problems.push({ alert: r.alert, key: r.key, problem: `fired at ${secs(r.firedT)} with no condition seen` });
  const evaluations = Math.max(0, Math.floor((answers.alerts.toT - answers.started.t) / answers.started.evalIntervalMs));
  const judged = { n: rules.size * evaluations, what };
  const figure = `${fmt(fs.length)} firings of ${fmt(rules.size)} rules over ${fmt(evaluations)} evaluations${said.length ? `; ${said.join('; ')}` : ''}`;
  if (problems.length) return { ...base, pass: false, figure, judged, examples: firstN(problems) };
  if (unjudged.length) return { ...base, pass: 'unknown', figure: `${figure}; not judged: ${unjudged.join('; ')}`, judged };
  return { ...base, pass: true, figure, judged };
}

export const prometheusAlerts: CheckerDef<PrometheusAlertsBounds> = {
  name: 'prometheus-alerts',
  says: 'the alert rules operators deploy, evaluated by a real Prometheus on what the run exported, fire when the harness sees their condition and resolve when it ends; nothing else pages',
  check: checkPrometheusAlerts,
  bounds: { mustFire: 'string[]', mustResolve: 'string[]', mayFire: 'string[]', fireWithinMs: 'number', resolveWithinMs: 'number', earlyMs: 'number' },
  defaults: { mustFire: [], mustResolve: [], mayFire: [], fireWithinMs: 5_000, resolveWithinMs: 5_000, earlyMs: 1_000 },
};
