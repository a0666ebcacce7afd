import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface PreparedStatementsBounds {
  /** Statements a worker without prepared statements must have run through its link before it is judged. */
  minBinds: number;
}

/**
 * A worker whose Db is built with `preparedStatements: false` (the worker's
 * `--no-prepared-statements`, for a pooler that drops prepared statements
 * between transactions) prepares nothing and still drains its share. Judged
 * on what its link proxy saw on the wire (`link:statements`: each Bind message
 * names the statement it executes, '' for the unnamed one), never on what the
 * worker says: a worker slot whose settings (`worker:settings`) say false must
 * have bound no named statement, over at least `minBinds` statements, and
 * completed jobs. Unknown when no such worker ran enough, or when no worker
 * with prepared statements bound a named one (the proxy would then be blind
 * to names, and a zero would prove nothing).
 */
export function checkPreparedStatements(history: readonly HistoryEvent[], _final: FinalState, bounds: PreparedStatementsBounds): InvariantResult {
  const prepares = new Map<string, boolean>();
  for (const s of eventsOf(history, 'worker:settings')) if (s.preparedStatements !== undefined) prepares.set(s.node, s.preparedStatements);
  const completed = new Map<string, number>();
  for (const e of eventsOf(history, 'job:completed')) completed.set(e.node, (completed.get(e.node) ?? 0) + 1);
  const wrong: { node: string; namedBinds: number; unnamedBinds: number }[] = [];
  const judged: string[] = [];
  let binds = 0;
  let seenNamed = false;
  for (const l of eventsOf(history, 'link:statements')) {
    const prepared = prepares.get(l.node);
    if (prepared === true && l.namedBinds > 0) seenNamed = true;
    if (prepared !== false) continue;
    if (l.namedBinds > 0) {
      wrong.push({ node: l.node, namedBinds: l.namedBinds, unnamedBinds: l.unnamedBinds });
      binds += l.namedBinds + l.unnamedBinds;
    } else if (l.unnamedBinds >= bounds.minBinds && (completed.get(l.node) ?? 0) > 0) {
      judged.push(l.node);
      binds += l.unnamedBinds;
    }
  }
  const blind = !seenNamed ? 'no worker with prepared statements bound a named one through its link' : '';
  return {
    name: 'prepared-statements-honoured',
    pass: wrong.length > 0 ? false : judged.length === 0 || blind ? 'unknown' : true,
    figure: `${fmt(judged.length + wrong.length)} worker slots without prepared statements: ${fmt(binds)} statements bound${judged.length ? `, ${judged.map((n) => `${n} completed ${fmt(completed.get(n) ?? 0)} jobs`).join(', ')}` : ''}; ${fmt(wrong.length)} bound named ones${blind && !wrong.length ? ` (${blind})` : ''}`,
    bound: `no named (prepared) statement bound by a worker with preparedStatements false, over at least ${fmt(bounds.minBinds)} statements, and jobs completed`,
    judged: { n: binds, what: 'statements bound through the links of workers without prepared statements' },
    ...(wrong.length ? { examples: firstN(wrong) } : {}),
  };
}

export const preparedStatementsHonoured: CheckerDef<PreparedStatementsBounds> = {
  name: 'prepared-statements-honoured',
  says: 'a worker with preparedStatements false binds no named statement on the wire, and still completes its jobs',
  check: checkPreparedStatements,
  bounds: { minBinds: 'number' },
  defaults: { minBinds: 100 },
};
