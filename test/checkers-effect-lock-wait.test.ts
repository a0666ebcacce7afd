import { describe, expect, it } from 'vitest';
import { checkCrashLoopIsolation } from '../harness/checkers/crash-loop-isolation.ts';
import { checkNoEffectLockWait, noEffectLockWait } from '../harness/checkers/no-effect-lock-wait.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h, job } from './support/history-builder.ts';

// Convention: w1 claims effect job 1 and freezes inside its effect at 1,000 ms, resumed at 16,000 ms; the
// rescuer takes the job back (w1 is dead by its liveness) and w2 retries it as a suspect.
const fleet = [h.settings(0, 'w1', { maxCrashes: 6 }), h.settings(0, 'w2', { maxCrashes: 6 })];
const frozen: HistoryEvent[] = [
  ...fleet,
  h.invoke(0, 1, 'effect'), h.ok(1, 1, 1), h.claim(10, 1, 'w1', 1), h.effectStarted(900, 1, 'w1', 1),
  ...h.frozenInEffect(1_000, 16_000, 1, 'w1'),
].sort((a, b) => a.t - b.t);
const retry = [h.rescuedFrom(6_000, 1, 'w1'), h.claim(6_100, 1, 'w2', 2, { crashCount: 1 }), h.effectStarted(7_000, 1, 'w2', 2)];
const bounds = noEffectLockWait.defaults;
const final = finalState([job(1, 'done', { kind: 'effect', attempts: 2, crashCount: 1 })]);
const history = (...tail: HistoryEvent[]) => [...frozen, ...retry, ...tail].sort((a, b) => a.t - b.t);

describe('no-effect-lock-wait', () => {
  it('passes when a retry that meets the frozen holder\'s key is handed back at once', () => {
    const r = checkNoEffectLockWait(history(h.deferred(7_004, 1, 'w2', 2), h.claim(7_500, 1, 'w2', 2, { crashCount: 1 }), h.effectStarted(8_400, 1, 'w2', 2), h.deferred(8_410, 1, 'w2', 2)), final, bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 waits; 2 effects asked for while another holder, frozen in it, held the key (1 frozen in an effect): 2 handed back within 10 ms');
    expect(r.judged).toEqual({ n: 2, what: 'effects asked for while another holder, frozen in it, held the key' });
  });

  it('fails (negative control) when the retry queues on the lock and keeps its claim until the holder resumes', () => {
    const r = checkNoEffectLockWait(history(h.leaseLost(17_500, 1, 'w1', 1, 'fail'), h.completed(17_600, 1, 'w2', 2)), final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toContainEqual(expect.objectContaining({ jobId: 1, holder: 'w2', attempt: 2, why: expect.stringContaining('completed 10,600 ms later') }));
  });

  it('fails when the waiting retry is charged a crash, and when it is never handed back at all', () => {
    const charged = checkNoEffectLockWait(history(h.exited(12_000, 'w2'), h.rescuedFrom(14_000, 1, 'w2', { attempts: 2, crashCount: 2 })), final, bounds);
    expect(charged.pass).toBe(false);
    expect(charged.examples).toContainEqual(expect.objectContaining({ why: expect.stringContaining('rescued, charged a crash 7,000 ms later') }));
    expect(checkNoEffectLockWait(history(), final, bounds).examples).toContainEqual(expect.objectContaining({ why: expect.stringContaining('never handed back') }));
  });

  it('lets off a retry whose own worker died before the bound, and judges nothing outside the freeze', () => {
    const killed = checkNoEffectLockWait(history(h.exited(7_200, 'w2')), final, bounds);
    expect(killed.pass).toBe('unknown');
    expect(killed.figure).toContain('1 whose own worker died or froze first');
    // Asked for after the resume: the holder may have let the key go, so the retry may take it.
    const after = [...frozen, h.rescuedFrom(6_000, 1, 'w1'), h.claim(16_100, 1, 'w2', 2), h.effectStarted(17_000, 1, 'w2', 2), h.completed(18_000, 1, 'w2', 2)];
    expect(checkNoEffectLockWait(after, final, bounds).pass).toBe('unknown');
    // A server restart during the freeze ends the frozen holder's transaction: the key is free after it.
    const restarted = history(h.fault(6_500, 'db-restart', { mode: 'crash' }), h.completed(8_000, 1, 'w2', 2));
    expect(checkNoEffectLockWait(restarted, final, bounds).pass).toBe('unknown');
  });

  it('is unknown when no worker froze inside an effect', () => {
    const plain = [...fleet, h.claim(10, 1, 'w1', 1), h.effectStarted(900, 1, 'w1', 1), h.completed(1_000, 1, 'w1', 1)];
    const r = checkNoEffectLockWait(plain, final, bounds);
    expect(r.pass).toBe('unknown');
    expect(r.figure).toContain('nothing to judge');
  });
});

describe('crash-loop-isolation and a deferred suspect', () => {
  it('counts a hand-back as the end of the suspect\'s hold: what its worker claims after is not beside it', () => {
    const after = history(h.deferred(7_004, 1, 'w2', 2), h.claim(7_100, 2, 'w2', 1), h.completed(7_200, 2, 'w2', 1));
    const r = checkCrashLoopIsolation(after, finalState([job(1, 'pending', { kind: 'effect', crashCount: 1 }), job(2, 'done', { crashCount: 0 })]), { poisonKinds: ['poison'] });
    expect(r.examples ?? []).not.toContainEqual(expect.objectContaining({ why: 'claimed beside a running suspect' }));
    expect(r.pass).toBe(true);
  });
});
