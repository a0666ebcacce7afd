import { describe, expect, it } from 'vitest';
import { ValidationError } from '../engine/errors.ts';
import { MUTANTS } from '../harness/mutants/index.ts';
import { checkDeadLetterRouting } from '../harness/checkers/dead-letter-routing.ts';
import { checkFaultsExercised, checkQueueDrained, inconclusiveReasons } from '../harness/checkers/inconclusive.ts';
import { CHECKERS, isCheckerName, resolveBounds, runCheckers, verdictOf } from '../harness/checkers/index.ts';
import type { FinalState } from '../harness/history.ts';
import { finalState, h, job } from './support/history-builder.ts';

describe('dead-letter-routing', () => {
  const bounds = { maxAttempts: 3, maxMs: 10_000, poisonKinds: ['poison'], doomedKinds: ['failing'] };
  const history = [h.invoke(0, 1, 'poison'), h.ok(1, 1, 1), h.invoke(2, 2), h.ok(3, 2, 2), h.claim(100, 1, 'w1', 1), h.claim(2_000, 1, 'w2', 2), h.dead(4_100, 1, 2)];

  it('passes when the poison is dead within its attempt and time bounds and nothing healthy died', () => {
    const r = checkDeadLetterRouting(history, finalState([job(1, 'dead', { attempts: 2 }), job(2, 'done')]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('1 of 1 poison jobs dead, slowest 4,000 ms from first claim, 0 over the attempt bound; 0 healthy jobs dead');
    expect(r.bound).toBe('poison dead within 3 attempts and 10,000 ms; 0 healthy dead');
    expect(r.judged).toEqual({ n: 2, what: 'poison and healthy jobs' });
  });

  it('fails (negative control) when the poison keeps going round, as when a crash never charges an attempt', () => {
    const r = checkDeadLetterRouting(history.slice(0, 6), finalState([job(1, 'pending', { attempts: 0 }), job(2, 'done')]), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ poisonNotDead: { jobId: 1, state: 'pending', attempts: 0 } }]);
  });

  it('fails when the poison took too many attempts or too long, and when a healthy job is dead', () => {
    const late = [...history.slice(0, 6), h.dead(60_000, 1, 5)];
    const r = checkDeadLetterRouting(late, finalState([job(1, 'dead', { attempts: 5 }), job(2, 'dead', { attempts: 1 })], { deadLetters: [{ jobId: 2, reason: 'crashed its worker' }] }), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([
      { tooManyAttempts: { jobId: 1, attempts: 5 } },
      { tooSlow: { jobId: 1, firstClaimToDeadMs: 59_900 } },
      { healthyDead: { jobId: 2, kind: 'normal', attempts: 1, reason: 'crashed its worker' } },
    ]);
  });

  it('fails when the poison was retired only by the attempt budget, as without crash-loop detection', () => {
    const claims = [1, 2, 3, 4, 5, 6].map((a) => h.claim(a * 1_000, 1, `w${a}`, a));
    const r = checkDeadLetterRouting([h.invoke(0, 1, 'poison'), h.ok(1, 1, 1), ...claims, h.dead(6_500, 1, 6)], finalState([job(1, 'dead', { attempts: 6 })]), {
      ...bounds,
      maxAttempts: 2,
    });
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ tooManyAttempts: { jobId: 1, attempts: 6 } }]);
  });

  it("takes the kind from the final row's payload for jobs no op enqueued, and a rescue that killed the job counts as dead", () => {
    const r = checkDeadLetterRouting([h.claim(0, 7, 'w'), h.rescued(3_000, 7, 1, true)], finalState([job(7, 'dead', { idempotencyKey: null, kind: 'poison' })]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toMatch(/^1 of 1 poison jobs dead, slowest 3,000 ms/);
  });
});

describe('inconclusive runs', () => {
  it('faults-exercised: unknown when a fault was injected without evidence, or declared and never injected', () => {
    const history = [h.fault(1, 'worker-kill'), h.fault(2, 'worker-kill'), h.evidence(3, 'worker-kill', { jobId: 4 }), h.fault(4, 'poison-pill')];
    const r = checkFaultsExercised(history, finalState([]), { declared: ['worker-kill', 'poison-pill', 'db-restart'] });
    expect(r.pass).toBe('unknown');
    expect(r.figure).toBe('evidence/injected: worker-kill 1/2, poison-pill 0/1');
    expect(r.examples).toEqual(['db-restart: declared, never injected', 'poison-pill: injected 1x, no evidence it bit']);
    expect(r.judged).toEqual({ n: 3, what: 'fault injections' });
    expect(checkFaultsExercised(history.slice(0, 3), finalState([]), { declared: ['worker-kill'] }).pass).toBe(true);
  });

  it('queue-drained: unknown while jobs are unfinished, true when all are done or dead', () => {
    const r = checkQueueDrained([], finalState([job(1, 'done'), job(2, 'pending'), job(3, 'failed'), job(4, 'dead')]));
    expect(r.pass).toBe('unknown');
    expect(r.figure).toBe('2 of 4 jobs unfinished (1 pending, 1 failed)');
    expect(checkQueueDrained([], finalState([job(1, 'done')])).pass).toBe(true);
  });

  it('inconclusiveReasons lists every reason in words', () => {
    expect(inconclusiveReasons([h.fault(1, 'worker-stop')], finalState([job(1, 'claimed')]))).toEqual([
      'worker-stop: injected 1x, no evidence it bit',
      'queue not drained: 1 of 1 jobs unfinished (1 claimed)',
    ]);
    expect(inconclusiveReasons([], finalState([job(1, 'done')]))).toEqual([]);
  });
});

describe('checker registry', () => {
  it('has a checker for the invariant every mutant must trip', () => {
    for (const [mutant, m] of Object.entries(MUTANTS)) {
      if (m.caughtBy === null) expect(m.awaits, `${mutant} names the invariant it awaits`).toBeTruthy();
      else expect(isCheckerName(m.caughtBy), `${mutant} → ${m.caughtBy}`).toBe(true);
    }
  });

  it('names each checker by its key, and every default passes its own bound validation', () => {
    for (const [name, def] of Object.entries(CHECKERS)) {
      expect(def.name).toBe(name);
      expect(() => resolveBounds(name as keyof typeof CHECKERS, def.defaults)).not.toThrow();
    }
  });

  it('turns a throwing checker into unknown with the error as its figure, and still runs the others', () => {
    const broken = { jobs: null } as unknown as FinalState;
    const [lost, stale] = runCheckers(['no-job-lost', 'no-stale-completion'], [h.claim(1, 1, 'w'), h.completed(2, 1, 'w')], broken);
    expect(lost.pass).toBe('unknown');
    expect(lost.figure).toMatch(/^checker threw: /);
    expect(lost.judged).toEqual({ n: 0, what: 'nothing (checker threw)' });
    expect(stale.pass).toBe(true);
  });

  it('never passes a checker that judged nothing: its pass becomes unknown and its figure says so', () => {
    // A fault-free, empty run: faults-exercised and queue-drained find nothing wrong, having judged nothing.
    const [faults, drained] = runCheckers(['faults-exercised', 'queue-drained'], [], finalState([]));
    expect(checkFaultsExercised([], finalState([]), { declared: [] }).pass).toBe(true);
    expect(faults).toEqual({
      name: 'faults-exercised',
      pass: 'unknown',
      figure: 'no faults injected; judged nothing (0 fault injections)',
      bound: 'every injected fault shows evidence; every declared fault injected',
      judged: { n: 0, what: 'fault injections' },
    });
    expect(drained).toMatchObject({ pass: 'unknown', figure: 'all 0 due jobs done or dead; judged nothing (0 due jobs)' });
    // A checker whose own rule passes: there was an effect job, but it died without its effect, so no key was owed.
    const effectDied = [h.invoke(0, 1, 'effect'), h.ok(1, 1, 1)];
    expect(CHECKERS['exactly-one-effect'].check(effectDied, finalState([job(1, 'dead')]), { kinds: ['effect'] }).pass).toBe(true);
    expect(runCheckers(['exactly-one-effect'], effectDied, finalState([job(1, 'dead')]))[0]).toMatchObject({ pass: 'unknown', judged: { n: 0 } });
  });

  it('leaves a pass over something judged, and any fail, as the checker said', () => {
    expect(runCheckers(['queue-drained'], [], finalState([job(1, 'done')]))[0]).toMatchObject({ pass: true, figure: 'all 1 due jobs done or dead', judged: { n: 1, what: 'due jobs' } });
    // Claimed before its run_at, though due when written: a violation seen over nothing the checker counts as telling is still one.
    const [early] = runCheckers(['no-early-start'], [h.claim(10, 1, 'w1', 1, { dbTime: 500, runAt: 1_000 })], finalState([job(1, 'done')]));
    expect(early).toMatchObject({ pass: false, judged: { n: 0 } });
  });

  it('refuses unknown checker names and malformed bounds, naming the field', () => {
    expect(() => runCheckers(['no-job-lost', 'fast-enough'], [], finalState([]))).toThrow(ValidationError);
    expect(() => runCheckers(['fast-enough'], [], finalState([]))).toThrow(/checkers\[0\]: unknown checker "fast-enough"; expected one of: no-job-lost,/);
    expect(() => resolveBounds('fairness', { maxLowWaitMs: 'soon' })).toThrow('checkers.fairness.maxLowWaitMs: expected a non-negative number, got "soon"');
    expect(() => resolveBounds('fairness', { maxWait: 5 })).toThrow(/checkers.fairness.maxWait: is not a bound of fairness; expected one of: maxLowWaitMs, lowQueues, highQueues/);
    expect(() => resolveBounds('oldest-age-slo', { incident: { fromMs: 5, toMs: 1 } })).toThrow(/incident: expected null or \{ fromMs, toMs \}/);
    expect(resolveBounds('fairness', { maxLowWaitMs: 5 })).toEqual({ maxLowWaitMs: 5, lowQueues: [], highQueues: [], maxLowOverHighMs: Number.MAX_SAFE_INTEGER });
  });

  it('copes with a long run: 200,000 claims and samples, more than one call can take as spread arguments', () => {
    const history = [];
    for (let id = 1; id <= 200_000; id++) history.push(h.claim(id / 10, id, 'w', 1, { priority: id % 2 ? 9 : 0, runAt: id / 10, dbTime: id / 10 + 5 }));
    for (let i = 1; i <= 200_000; i++) history.push(h.sample(20_000 + i, { default: i % 100 }));
    const results = runCheckers(['fairness', 'oldest-age-slo', 'no-concurrent-claim'], history, finalState([]));
    expect(results.map((r) => r.pass)).toEqual([true, true, true]);
    expect(results[0].figure).toMatch(/^low-lane max wait 5 ms over 100,000 claims/);
  });

  it('gives one verdict: a violation fails the run even if it is also inconclusive', () => {
    const r = (name: string, pass: boolean | 'unknown') => ({ name, pass, figure: '', bound: '', judged: { n: 1, what: 'events' } });
    expect(verdictOf([r('a', true), r('b', 'unknown'), r('c', false)])).toEqual({ verdict: 'fail', exitCode: 1, failed: ['c'], unknown: ['b'], notHere: [] });
    expect(verdictOf([r('a', true), r('b', 'unknown')])).toMatchObject({ verdict: 'inconclusive', exitCode: 3 });
    expect(verdictOf([r('a', true)])).toMatchObject({ verdict: 'pass', exitCode: 0 });
    expect(verdictOf([])).toMatchObject({ verdict: 'inconclusive', exitCode: 3 });
  });

  it('leaves a check this machine cannot run (no Prometheus) out of a developer run, never as a pass; a strict run (CI, the gate) is inconclusive', () => {
    const r = (name: string, pass: boolean | 'unknown') => ({ name, pass, figure: '', bound: '', judged: { n: 1, what: 'events' } });
    const absent = { ...r('p', 'unknown'), notHere: 'apt-get install prometheus' };
    expect(verdictOf([r('a', true), absent])).toEqual({ verdict: 'pass', exitCode: 0, failed: [], unknown: [], notHere: ['p'] });
    expect(verdictOf([r('a', true), absent], { strict: true })).toMatchObject({ verdict: 'inconclusive', exitCode: 3, unknown: ['p'] });
    expect(verdictOf([r('a', false), absent])).toMatchObject({ verdict: 'fail', notHere: ['p'] });
    // Nothing but checks that could not run is no pass.
    expect(verdictOf([absent])).toMatchObject({ verdict: 'inconclusive', exitCode: 3 });
  });
});
