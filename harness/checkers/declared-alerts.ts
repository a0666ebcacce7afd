import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { fmt, type CheckerDef } from './types.ts';

export interface DeclaredAlertsBounds {
  /** Signals (`oldest-unclaimed-age`, `dead-letter-depth`, `xmin-horizon-age`) that must cross their threshold upward. Default []. */
  mustFire: string[];
  /** Signals that must, after their last upward crossing, cross back down before the run ends. Default []. */
  mustClear: string[];
}

/**
 * Every alert a scenario declares must fire does fire, and every one it
 * declares must clear does clear. The crossings are the runner's, computed
 * from the harness's own queue-state reading (harness/runner/sampler.ts),
 * so an engine whose sampler never reports the backlog cannot pass by
 * staying silent. Unknown when the scenario declares none.
 */
export function checkDeclaredAlerts(history: readonly HistoryEvent[], _final: FinalState, bounds: DeclaredAlertsBounds): InvariantResult {
  const base = { name: 'declared-alerts', bound: `fire: ${bounds.mustFire.join(', ') || 'none'}; clear: ${bounds.mustClear.join(', ') || 'none'}` };
  const signals = new Set([...bounds.mustFire, ...bounds.mustClear]);
  const judged = { n: signals.size, what: 'declared alert signals' };
  if (signals.size === 0) return { ...base, pass: 'unknown', figure: 'no alert declared: nothing to judge', judged };
  const ups = new Map<string, number[]>();
  const downs = new Map<string, number[]>();
  for (const e of history) {
    if (e.type !== 'alert:crossed') continue;
    const into = e.direction === 'up' ? ups : downs;
    into.set(e.signal, [...(into.get(e.signal) ?? []), e.t]);
  }
  const problems: string[] = [];
  const said: string[] = [];
  for (const signal of signals) {
    const up = ups.get(signal) ?? [];
    const lastUp = up.at(-1);
    const cleared = lastUp !== undefined && (downs.get(signal) ?? []).some((t) => t > lastUp);
    if (up.length === 0) problems.push(`${signal}: never fired`);
    else if (bounds.mustClear.includes(signal) && !cleared) problems.push(`${signal}: fired at ${fmt(lastUp!)} ms, never cleared`);
    said.push(up.length ? `${signal} fired at ${fmt(up[0])} ms${cleared ? ', cleared' : ''}` : `${signal} never fired`);
  }
  return { ...base, pass: problems.length === 0, figure: said.join('; '), judged, ...(problems.length ? { examples: problems } : {}) };
}

export const declaredAlerts: CheckerDef<DeclaredAlertsBounds> = {
  name: 'declared-alerts',
  says: 'every alert the scenario says must fire fires (on the harness\'s own figures), and every one it says must clear clears',
  check: checkDeclaredAlerts,
  bounds: { mustFire: 'string[]', mustClear: 'string[]' },
  defaults: { mustFire: [], mustClear: [] },
};
