// attempt-budget-as-set on small hand-written histories, with violating ones.
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../engine/defaults.ts';
import { attemptBudgetAsSet, checkAttemptBudget } from '../harness/checkers/attempt-budget-as-set.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, job } from './support/history-builder.ts';

const bounds = { minQueueBudgeted: 2 };
const setBudget = (queue: string, maxAttempts: number): HistoryEvent => ({ t: 0, node: 'harness', type: 'setup:queue-budget', queue, maxAttempts });
const ok = (jobId: number, queue: string, ownBudget: number | null): HistoryEvent => ({
  t: jobId, node: 'generator', type: 'enqueue:ok', op: jobId, jobId, queue, runAt: jobId, intendedAt: jobId, sentAt: jobId, ownBudget,
});

describe('attempt-budget-as-set', () => {
  const history = [setBudget('orders', 3), ok(1, 'orders', null), ok(2, 'orders', null), ok(3, 'orders', 9), ok(4, 'mail', null)];

  it("passes jobs carrying their queue's budget, their own over it, and the default where no queue budget is set", () => {
    const final = finalState([job(1, 'done', { queue: 'orders', maxAttempts: 3 }), job(2, 'dead', { queue: 'orders', maxAttempts: 3 }), job(3, 'done', { queue: 'orders', maxAttempts: 9 }), job(4, 'done', { queue: 'mail', maxAttempts: DEFAULTS.maxAttempts })]);
    const r = checkAttemptBudget(history, final, bounds);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 4, what: "acknowledged jobs' attempt budgets" });
  });

  it("fails (negative control) jobs that took the default over their queue's budget, or the queue's over their own", () => {
    const ignoredQueue = finalState([job(1, 'done', { queue: 'orders', maxAttempts: DEFAULTS.maxAttempts }), job(2, 'done', { queue: 'orders', maxAttempts: 3 }), job(3, 'done', { queue: 'orders', maxAttempts: 9 })]);
    const r = checkAttemptBudget(history, ignoredQueue, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([expect.objectContaining({ jobId: 1, expected: 3, actual: DEFAULTS.maxAttempts, from: 'its queue' })]);
    const ownLost = finalState([job(1, 'done', { queue: 'orders', maxAttempts: 3 }), job(2, 'done', { queue: 'orders', maxAttempts: 3 }), job(3, 'done', { queue: 'orders', maxAttempts: 3 })]);
    expect(checkAttemptBudget(history, ownLost, bounds).examples).toEqual([expect.objectContaining({ jobId: 3, expected: 9, actual: 3, from: 'its own' })]);
  });

  it("is unknown when too few jobs took a queue's budget, or there was no history; a peer's enqueue (no ownBudget) is not judged", () => {
    const final = finalState([job(1, 'done', { queue: 'orders', maxAttempts: 3 }), job(4, 'done', { queue: 'mail', maxAttempts: DEFAULTS.maxAttempts })]);
    expect(checkAttemptBudget([setBudget('orders', 3), ok(1, 'orders', null), ok(4, 'mail', null)], final, bounds).pass).toBe('unknown');
    expect(checkAttemptBudget([], finalState([]), attemptBudgetAsSet.defaults).pass).toBe('unknown');
    const peer: HistoryEvent = { t: 1, node: 'generator', type: 'enqueue:ok', op: 1, jobId: 1, queue: 'orders', runAt: 1, intendedAt: 1, sentAt: 1 };
    expect(checkAttemptBudget([setBudget('orders', 3), peer], finalState([job(1, 'done', { queue: 'orders', maxAttempts: 99 })]), bounds).judged.n).toBe(0);
  });
});
