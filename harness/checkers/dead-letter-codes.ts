import type { DeadLetterCode } from '../../engine/dead-letters.ts';
import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export type DeadLetterCodesBounds = Record<string, never>;

/** A failure's error as the worker records it (`<name>: <message>`) for engine/errors.ts's JobTimeoutError: the attempt ran past timeoutMs. */
const TIMEOUT_ERROR = /^JobTimeoutError: handler exceeded its timeout of \d+ ms/;

/**
 * Why each job died, by what the history shows of its death and not by the
 * code the engine wrote: the last, per job, of
 *
 * - an accepted dead-letter by hand: `operator` (a later accepted redrive or
 *   retry of it starts a new life, so it forgets the cause);
 * - a failure reported at the job's budget: `timeout` when its error is the
 *   handler's timeout, else `attempts_exhausted`;
 * - a rescue that left the job dead: `lease_expired` when the rescued attempt
 *   was the last of its budget, else `crash_loop` (only a conviction kills a
 *   job below its budget; at the budget the budget is the cause, as
 *   docs/engine.md says).
 *
 * A dead job whose death's report is missing (its worker or its rescuer was
 * killed before reporting) is still judged when its row shows attempts left:
 * nothing but a conviction or an operator kills a job below its budget, and
 * an operator's verb is always recorded.
 */
function expectedCodes(history: readonly HistoryEvent[], final: FinalState): Map<number, DeadLetterCode> {
  const budget = new Map(final.jobs.map((j) => [j.id, j.maxAttempts]));
  const cause = new Map<number, DeadLetterCode>();
  const deaths = history.filter((e) => e.type === 'operator:action' || e.type === 'job:failed' || (e.type === 'lease:rescued' && e.dead));
  // By the database's time when each has it: a verb's report (the runner's) and a death's (a worker's) reach the history in either order.
  if (deaths.every((e) => e.dbTime !== undefined)) deaths.sort((a, b) => a.dbTime! - b.dbTime!);
  for (const e of deaths) {
    if (e.type === 'operator:action' && e.outcome === 'ok') {
      for (const id of e.jobIds) {
        if (e.verb === 'dead-letter') cause.set(id, 'operator');
        else if (e.verb === 'redrive' || e.verb === 'retry') cause.delete(id);
      }
    } else if (e.type === 'job:failed') {
      const max = e.maxAttempts ?? budget.get(e.jobId);
      if (max !== undefined && e.attempt >= max) cause.set(e.jobId, TIMEOUT_ERROR.test(e.error) ? 'timeout' : 'attempts_exhausted');
    } else if (e.type === 'lease:rescued' && e.dead) {
      const max = budget.get(e.jobId);
      if (max !== undefined) cause.set(e.jobId, e.attempts >= max ? 'lease_expired' : 'crash_loop');
    }
  }
  for (const j of final.jobs) {
    if (j.state === 'dead' && !cause.has(j.id) && j.maxAttempts !== undefined && j.attempts < j.maxAttempts) cause.set(j.id, 'crash_loop');
  }
  return cause;
}

/**
 * Every dead letter's code names the path that killed its job
 * (engine/dead-letters.ts, DEAD_LETTER_CODES), judged against the history's
 * own account of each death (expectedCodes). A dead letter without a code (a
 * run stored before the code, a peer engine's) or whose cause the history
 * cannot tell (a death at the budget whose report was lost) is not judged.
 * Unknown when no dead letter was judged.
 */
export function checkDeadLetterCodes(history: readonly HistoryEvent[], final: FinalState): InvariantResult {
  const expected = expectedCodes(history, final);
  const byCode = new Map<DeadLetterCode, number>();
  const wrong: { jobId: number; code: DeadLetterCode; expected: DeadLetterCode; reason: string }[] = [];
  let unjudged = 0;
  for (const letter of final.deadLetters) {
    const want = expected.get(letter.jobId);
    if (letter.code === undefined || want === undefined) {
      unjudged++;
      continue;
    }
    byCode.set(want, (byCode.get(want) ?? 0) + 1);
    if (letter.code !== want) wrong.push({ jobId: letter.jobId, code: letter.code, expected: want, reason: letter.reason.slice(0, 80) });
  }
  const judgedN = final.deadLetters.length - unjudged;
  const counts = [...byCode].map(([code, n]) => `${fmt(n)} ${code}`).join(', ');
  const base = {
    name: 'dead-letter-codes',
    bound: 'each dead letter coded for the path that killed its job: operator, timeout, attempts_exhausted, lease_expired or crash_loop',
    judged: { n: judgedN, what: 'dead letters whose death the history shows' },
    figure: `${fmt(wrong.length)} of ${fmt(judgedN)} dead letters coded wrong${counts ? ` (${counts})` : ''}; ${fmt(unjudged)} not judged (no code, or the death's report lost)`,
  };
  if (wrong.length) return { ...base, pass: false, examples: firstN(wrong) };
  return { ...base, pass: judgedN > 0 ? true : 'unknown' };
}

export const deadLetterCodes: CheckerDef<DeadLetterCodesBounds> = {
  name: 'dead-letter-codes',
  says: 'every dead letter carries the code of the path that killed its job, as the history shows that death',
  check: checkDeadLetterCodes,
  bounds: {},
  defaults: {},
};
