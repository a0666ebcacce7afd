import { isMap, isSeq, parseDocument, type Scalar } from 'yaml';

/** One alerting rule as the run loaded it: its name, its `for:` after scaling (ms), its severity. */
export interface LoadedRule {
  alert: string;
  forMs: number;
  severity: string | null;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 };

/** A Prometheus duration (`2m`, `1h30m`, `500ms`) in ms; throws naming the text when it is not one. */
export function parseDuration(text: string): number {
  const parts = [...text.matchAll(/(\d+)(ms|[smhdwy])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) throw new Error(`"${text}" is not a Prometheus duration (e.g. 2m, 1h30m, 500ms)`);
  return parts.reduce((ms, p) => ms + Number(p[1]) * UNIT_MS[p[2]], 0);
}

/**
 * An alert rules file with every `for:` (and `keep_firing_for:`) multiplied by
 * `scale`, and nothing else changed: the expressions, thresholds, labels and
 * annotations are the ones users deploy, byte for byte (the YAML is parsed
 * only to find where each `for:` value is, and the text is edited there). A scenario compresses minutes
 * into seconds (Scenario.alertForScale); the `[15m]` ranges of the
 * expressions are not scaled, as they are part of what the rule means.
 * Throws, naming `source`, when the text is not a rules file.
 */
export function scaleRuleWindows(text: string, scale: number, source: string): { text: string; rules: LoadedRule[] } {
  const doc = parseDocument(text);
  if (doc.errors.length) throw new Error(`${source}: not YAML: ${doc.errors[0].message}`);
  const groups = doc.get('groups');
  if (!isSeq(groups)) throw new Error(`${source}: expected a top-level "groups" list (a Prometheus rules file)`);
  const rules: LoadedRule[] = [];
  // Where each for: value is in the text, and what it becomes: replaced in the text itself, byte for byte elsewhere.
  const edits: { from: number; to: number; text: string }[] = [];
  for (const group of groups.items) {
    const list = isMap(group) ? group.get('rules') : undefined;
    if (!isSeq(list)) throw new Error(`${source}: expected each group to have a "rules" list`);
    for (const rule of list.items) {
      if (!isMap(rule) || rule.get('alert') === undefined) continue; // a recording rule has no for:
      const alert = String(rule.get('alert'));
      let forMs = 0;
      for (const key of ['for', 'keep_firing_for']) {
        const node = rule.get(key, true) as Scalar | undefined;
        if (node === undefined) continue;
        let ms: number;
        try {
          ms = parseDuration(String(node.value));
        } catch (err) {
          throw new Error(`${source}: rule ${alert}: ${key}: ${(err as Error).message}`);
        }
        const scaled = Math.round(ms * scale);
        if (!node.range) throw new Error(`${source}: rule ${alert}: ${key}: no position in the text`);
        edits.push({ from: node.range[0], to: node.range[1], text: `${scaled}ms` });
        if (key === 'for') forMs = scaled;
      }
      const labels = rule.get('labels');
      const severity = isMap(labels) && labels.get('severity') !== undefined ? String(labels.get('severity')) : null;
      rules.push({ alert, forMs, severity });
    }
  }
  let out = text;
  for (const e of edits.sort((a, b) => b.from - a.from)) out = out.slice(0, e.from) + e.text + out.slice(e.to);
  return { text: out, rules };
}
