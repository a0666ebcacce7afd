import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export type CliBadInputBounds = Record<string, never>;

/**
 * `stampede control` answers an operator's typo (the cli-typos fault: a job id
 * with a stray letter, a zero limit or weight, a misspelt command, a change
 * without --by) with exit 2 and a `stampede control:` message naming the bad
 * input, and changes nothing: the typo'd job and the queue read the same after
 * as before, and the audit holds no row under the typist's name that it did
 * not hold before. Judged over every typo; unknown with none.
 */
export function checkCliRefusesBadInput(history: readonly HistoryEvent[], _final: FinalState): InvariantResult {
  const typos = eventsOf(history, 'control:typo');
  const bad: Record<string, unknown>[] = [];
  for (const t of typos) {
    const where = { command: t.command.join(' '), exitCode: t.exitCode };
    if (t.exitCode !== 2) bad.push({ ...where, answer: t.answer, expected: 'exit 2 (refused)' });
    else if (!t.answer.startsWith('stampede control:') || !t.answer.includes(t.input)) bad.push({ ...where, refusal: t.answer, expected: `a stampede control: message naming ${t.input}` });
    const changed = Object.keys({ ...t.before, ...t.after }).filter((k) => t.before[k] !== t.after[k]);
    for (const k of changed) bad.push({ ...where, target: k, before: t.before[k], after: t.after[k] });
    if (t.auditAfter !== t.auditBefore) bad.push({ ...where, auditRows: `${t.auditBefore} -> ${t.auditAfter}` });
  }
  const base = {
    name: 'cli-refuses-bad-input',
    bound: 'exit 2 with a stampede control: message naming the bad input, nothing changed and nothing audited',
    judged: { n: typos.length, what: 'typos at the command line' },
  };
  if (!typos.length) return { ...base, pass: 'unknown', figure: 'no typo was made at the command line: nothing to judge' };
  const figure = `${fmt(bad.length)} wrong of ${fmt(typos.length)} typos at the command line`;
  return bad.length ? { ...base, pass: false, figure, examples: firstN(bad) } : { ...base, pass: true, figure };
}

export const cliRefusesBadInput: CheckerDef<CliBadInputBounds> = {
  name: 'cli-refuses-bad-input',
  says: "stampede control refuses an operator's typo with exit 2 and a message naming the bad input, and changes nothing",
  check: checkCliRefusesBadInput,
  bounds: {},
  defaults: {},
};
