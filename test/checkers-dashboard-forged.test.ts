import { describe, expect, it } from 'vitest';
import { checkDashboardRefusesForged } from '../harness/checkers/dashboard-refuses-forged.ts';
import type { EventOf, Forgery, HistoryEvent } from '../harness/history.ts';
import { FORGERIES } from '../harness/runner/dashboard-client.ts';
import { finalState } from './support/history-builder.ts';

type Forged = EventOf<'dashboard:forged'>;

/** A forged cancel of running job 7, answered with its refusal, the job still running after it. */
const forged = (forgery: Forgery, x: Partial<Forged> = {}): HistoryEvent => ({
  t: 100,
  node: 'intruder',
  type: 'dashboard:forged',
  forgery,
  verb: 'cancel',
  by: 'intruder',
  reason: `forged (${forgery}) beside scenario fault cancel #3.0`,
  jobIds: [7],
  status: FORGERIES[forgery],
  answer: 'Refused',
  before: { 7: 'claimed' },
  after: { 7: 'claimed' },
  ...x,
});

const every = (Object.keys(FORGERIES) as Forgery[]).map((f) => forged(f));
const audited = { audit: [{ verb: 'cancel', queue: 'orders', jobId: 8, actor: 'oncall-dashboard', reason: 'scenario fault cancel #3.1' }] };

describe('dashboard-refuses-forged', () => {
  it('passes when every forged request got its refusal and changed nothing', () => {
    const r = checkDashboardRefusesForged(every, finalState([], audited));
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 5, what: 'forged requests' });
    expect(r.figure).toBe('5 forged requests (get 1, no-session 1, no-csrf 1, wrong-csrf 1, foreign-origin 1); 0 got through or changed something');
  });

  it('a running job that finished meanwhile is not a change the forged cancel made', () => {
    const r = checkDashboardRefusesForged([forged('no-csrf', { after: { 7: 'done' } })], finalState([], audited));
    expect(r.pass).toBe(true);
  });

  it('fails (negative control) on a forged request the dashboard took: a redirect, its audit row, the job cancelled', () => {
    const through = forged('foreign-origin', { status: 303, answer: '', after: { 7: 'cancelled' } });
    const reason = (through as Forged).reason;
    const r = checkDashboardRefusesForged([...every.slice(0, 4), through], finalState([], { audit: [...audited.audit, { verb: 'cancel', queue: 'orders', jobId: 7, actor: 'intruder', reason }] }));
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ forgery: 'foreign-origin', verb: 'cancel', jobIds: [7], wrong: ['answered 303, expected 403: ', 'audited', 'job 7: claimed -> cancelled'] }]);
  });

  it("fails when a refused forgery still moved its queue's limits", () => {
    const limits = forged('wrong-csrf', { verb: 'set-limits', queue: 'orders', jobIds: [], before: { orders: 'running maxInFlight=none' }, after: { orders: 'running maxInFlight=8' } });
    expect(checkDashboardRefusesForged([limits], finalState([], audited)).pass).toBe(false);
  });

  it('is unknown when no forged request was sent, or the final state has no audit', () => {
    expect(checkDashboardRefusesForged([], finalState([], audited)).pass).toBe('unknown');
    expect(checkDashboardRefusesForged(every, finalState([])).pass).toBe('unknown');
  });
});
