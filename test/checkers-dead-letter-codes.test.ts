import { describe, expect, it } from 'vitest';
import { checkDeadLetterCodes } from '../harness/checkers/dead-letter-codes.ts';
import type { FinalState, HistoryEvent } from '../harness/history.ts';
import { finalState, h, job } from './support/history-builder.ts';

type Letter = FinalState['deadLetters'][number];
const letter = (jobId: number, code: Letter['code'], reason = 'why'): Letter => ({ jobId, code, reason });

/** One death by each path: an exhausted budget, a timeout at the budget, a lease expired at it, a conviction, a hand's. */
const history: HistoryEvent[] = [
  h.failed(10, 1, 'w1', 3, { error: 'Error: card declined' }),
  h.failed(20, 2, 'w1', 3, { error: 'JobTimeoutError: handler exceeded its timeout of 2600 ms' }),
  h.rescuedFrom(30, 3, 'w1', { attempts: 3, crashCount: 1, dead: true }),
  h.rescuedFrom(40, 4, 'w1', { attempts: 2, crashCount: 2, dead: true }),
  h.operator(50, 'dead-letter', [5], { before: { 5: 'claimed' }, after: { 5: 'dead' } }),
];
const jobs = [1, 2, 3, 4, 5].map((id) => job(id, 'dead', { attempts: id === 4 ? 2 : id === 5 ? 1 : 3, maxAttempts: 3 }));
const right = [letter(1, 'attempts_exhausted'), letter(2, 'timeout'), letter(3, 'lease_expired'), letter(4, 'crash_loop'), letter(5, 'operator')];

describe('dead-letter-codes', () => {
  it('passes when each dead letter is coded for the path the history shows killed its job', () => {
    const r = checkDeadLetterCodes(history, finalState(jobs, { deadLetters: right }));
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 5, what: 'dead letters whose death the history shows' });
    expect(r.figure).toBe('0 of 5 dead letters coded wrong (1 attempts_exhausted, 1 timeout, 1 lease_expired, 1 crash_loop, 1 operator); 0 not judged (no code, or the death\'s report lost)');
  });

  it("fails (negative control) when the rescuer codes a conviction lease_expired, and when a timeout is coded as the handler's error", () => {
    const wrong = right.map((l) => (l.jobId === 4 ? letter(4, 'lease_expired') : l.jobId === 2 ? letter(2, 'attempts_exhausted') : l));
    const r = checkDeadLetterCodes(history, finalState(jobs, { deadLetters: wrong }));
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([
      { jobId: 2, code: 'attempts_exhausted', expected: 'timeout', reason: 'why' },
      { jobId: 4, code: 'lease_expired', expected: 'crash_loop', reason: 'why' },
    ]);
  });

  it('a redrive starts a new life: a job dead-lettered by hand, redriven and convicted is a crash loop', () => {
    const redriven = [
      h.operator(50, 'dead-letter', [5]),
      h.operator(60, 'redrive', [5]),
      h.rescuedFrom(70, 5, 'w2', { attempts: 2, crashCount: 2, dead: true }),
    ];
    const final = finalState([job(5, 'dead', { attempts: 2, maxAttempts: 3 })], { deadLetters: [letter(5, 'operator')] });
    expect(checkDeadLetterCodes(redriven, final).examples).toEqual([{ jobId: 5, code: 'operator', expected: 'crash_loop', reason: 'why' }]);
  });

  it("judges a death whose report was lost only when the row shows attempts left (a conviction); a refused dead-letter is no cause", () => {
    const refused = [h.operator(50, 'dead-letter', [6], { outcome: 'refused', refusal: 'JobStateError' })];
    const final = finalState([job(6, 'dead', { attempts: 1, maxAttempts: 25 }), job(7, 'dead', { attempts: 3, maxAttempts: 3 })], {
      deadLetters: [letter(6, 'crash_loop'), letter(7, 'lease_expired')],
    });
    const r = checkDeadLetterCodes(refused, final);
    expect(r.pass).toBe(true);
    expect(r.judged.n).toBe(1);
    expect(r.figure).toMatch(/1 not judged/);
  });

  it('is unknown with no dead letter, or none with a code (a peer engine, a run stored before the code)', () => {
    expect(checkDeadLetterCodes([], finalState([job(1, 'done')])).pass).toBe('unknown');
    const uncoded = finalState([job(1, 'dead', { attempts: 3, maxAttempts: 3 })], { deadLetters: [{ jobId: 1, reason: 'attempts exhausted' }] });
    expect(checkDeadLetterCodes([h.failed(10, 1, 'w1', 3)], uncoded).pass).toBe('unknown');
  });
});
