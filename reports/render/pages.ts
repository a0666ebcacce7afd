import { alertRows } from '../../harness/checkers/prometheus-alerts.ts';
import { isAnswers, prometheusAnswers } from '../../harness/checkers/prometheus-answers.ts';
import type { HistoryEvent } from '../../harness/history.ts';
import type { Block } from './document.ts';
import { fmtT } from './format.ts';

/** "12.3 s (+3.0 s)": a time of the run, and how long after `since` it came. */
function after(t: number | null, since: number | null): string {
  if (t === null) return '—';
  return since === null ? fmtT(t) : `${fmtT(t)} (+${((t - since) / 1000).toFixed(1)} s)`;
}

/**
 * The detection section's pages: for each alert of the rules the run's
 * Prometheus loaded, when the harness saw its condition, when Prometheus
 * fired it and when it resolved, so a postmortem reads the page times the
 * on-call person actually got. Says why when the run had no Prometheus.
 */
export function pageBlocks(history: readonly HistoryEvent[]): Block[] {
  const answers = prometheusAnswers(history, { name: 'pages', bound: '' }, 'pages');
  if (!isAnswers(answers)) return [{ kind: 'p', text: `Pages: ${answers.figure}.` }];
  const rows = alertRows(history, answers).filter((r) => r.firedT !== null || r.conditionFromT !== null);
  const intro = `Pages from the alert rules in \`${answers.started.rulesSource}\`, evaluated by the run's Prometheus (every \`for:\` scaled by ${+answers.started.alertForScale.toFixed(4)}):`;
  if (rows.length === 0) return [{ kind: 'p', text: `${intro} none fired, and the harness saw no alert's condition.` }];
  return [
    { kind: 'p', text: intro },
    {
      kind: 'table',
      header: ['Alert', 'Queue', 'Condition seen', 'Fired', 'Condition over', 'Resolved'],
      rows: rows.map((r) => [
        `\`${r.alert}\``,
        r.key || '—',
        r.conditionFromT === null ? 'never' : fmtT(r.conditionFromT),
        after(r.firedT, r.conditionFromT),
        r.conditionToT === null ? (r.conditionFromT === null ? '—' : 'held to the end') : fmtT(r.conditionToT),
        r.firedT === null ? '—' : r.resolvedT === null ? 'firing at the end' : after(r.resolvedT, r.conditionToT),
      ]),
    },
  ];
}
