/**
 * Checks that the shipped alert rules and dashboard select only series this
 * registry exports, so a renamed metric breaks a test instead of silently
 * turning an alert into one that can never fire. Pure functions over the
 * parsed documents; the caller parses the YAML/JSON.
 */

/** A PromQL expression and where it came from, for error messages. */
export interface Expression {
  where: string;
  expr: string;
}

export interface UnknownReference {
  where: string;
  metric: string;
}

const KEYWORDS = new Set(['and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects. A lexical reading, which is
 * enough for rule files: strings, label matchers, ranges, grouping label
 * lists, offsets, numbers and Grafana variables are removed first; what is
 * left that is an identifier not followed by `(` and not a keyword is a
 * metric selector.
 */
export function metricNamesInPromQL(expr: string): string[] {
  let s = expr;
  s = s.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ');
  s = s.replace(/\$\{[^}]*\}|\$\w+/g, ' ');
  s = s.replace(/\{[^}]*\}/g, ' ');
  s = s.replace(/\[[^\]]*\]/g, ' ');
  s = s.replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  s = s.replace(/\b(?:offset)\s+-?[\w.]+|@\s*[\w.()]+/g, ' ');
  s = s.replace(/(?<![A-Za-z_:])(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)(?:[smhdwy]|ms)?(?![\w:])/g, ' ');
  const names: string[] = [];
  for (const m of s.matchAll(/[A-Za-z_:][\w:]*/g)) {
    const after = s.slice(m.index! + m[0].length);
    if (/^\s*\(/.test(after)) continue; // a function or aggregation
    if (KEYWORDS.has(m[0].toLowerCase())) continue;
    names.push(m[0]);
  }
  return [...new Set(names)];
}

/** Every `expr` in a Prometheus rules document (`groups[].rules[]`), alerting and recording rules alike. */
export function expressionsInRules(doc: unknown): Expression[] {
  const groups = (doc as { groups?: unknown })?.groups;
  if (!Array.isArray(groups)) throw new TypeError('rules document: expected a top-level "groups" list');
  const out: Expression[] = [];
  groups.forEach((g: any, gi) => {
    if (!Array.isArray(g?.rules)) throw new TypeError(`groups[${gi}] (${g?.name ?? 'unnamed'}): expected a "rules" list`);
    g.rules.forEach((r: any, ri: number) => {
      const name = r?.alert ?? r?.record;
      if (typeof name !== 'string') throw new TypeError(`groups[${gi}].rules[${ri}]: expected "alert" or "record"`);
      if (typeof r.expr !== 'string' || r.expr.trim() === '') throw new TypeError(`rule ${name}: expected a non-empty "expr"`);
      out.push({ where: `rule ${name}`, expr: r.expr });
    });
  });
  return out;
}

/** Every PromQL query in a Grafana dashboard: panel targets (rows nest panels) and templating variables. */
export function expressionsInDashboard(dashboard: unknown): Expression[] {
  const d = dashboard as { panels?: unknown[]; templating?: { list?: unknown[] } };
  if (!Array.isArray(d?.panels)) throw new TypeError('dashboard: expected a "panels" list');
  const out: Expression[] = [];
  const walk = (panels: any[]) => {
    for (const p of panels) {
      for (const t of p?.targets ?? []) {
        if (typeof t?.expr === 'string') out.push({ where: `panel "${p.title}" target ${t.refId ?? '?'}`, expr: t.expr });
      }
      if (Array.isArray(p?.panels)) walk(p.panels);
    }
  };
  walk(d.panels);
  for (const v of (d.templating?.list ?? []) as any[]) {
    if (v?.type !== 'query') continue; // datasource, interval, custom and constant variables hold no PromQL
    const query = typeof v?.query === 'string' ? v.query : v?.query?.query;
    if (typeof query !== 'string') continue;
    // label_values(metric, label) / label_values(label) / query_result(expr): only the metric part is PromQL.
    const lv = /^\s*label_values\(\s*(.+?)\s*(?:,\s*\w+\s*)?\)\s*$/.exec(query);
    const qr = /^\s*query_result\((.*)\)\s*$/.exec(query);
    const expr = lv ? (/,/.test(query) ? lv[1] : '') : qr ? qr[1] : query;
    if (expr) out.push({ where: `variable ${v.name}`, expr });
  }
  return out;
}

/** The references in `expressions` to series not in `known`. Empty means every query selects something that exists. */
export function unknownMetricReferences(expressions: readonly Expression[], known: ReadonlySet<string>): UnknownReference[] {
  const unknown: UnknownReference[] = [];
  for (const { where, expr } of expressions) {
    for (const metric of metricNamesInPromQL(expr)) if (!known.has(metric)) unknown.push({ where, metric });
  }
  return unknown;
}
