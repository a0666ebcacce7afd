import { describe, expect, it } from 'vitest';
import { checkAttemptAccounting } from '../harness/checkers/attempt-accounting.ts';
import { checkCrashLoopIsolation } from '../harness/checkers/crash-loop-isolation.ts';
import { checkLeaseFencing } from '../harness/checkers/lease-fencing.ts';
import { checkParametersHonoured } from '../harness/checkers/parameters-honoured.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h, job } from './support/history-builder.ts';

// Convention: op n became job n; workers w1 and w2 report their settings first (lease 2 s, heartbeats every 500 ms, maxCrashes 2).
const fleet = [h.settings(0, 'w1'), h.settings(0, 'w2')];

describe('attempt-accounting', () => {
  const bounds = { doomedKinds: ['failing'], minExhausted: 1 };
  // Job 1 fails every attempt of its budget of 3 and dies; job 2 fails once, then completes.
  const history: HistoryEvent[] = [
    h.invoke(0, 1, 'failing'), h.ok(1, 1, 1), h.invoke(0, 2, 'flaky'), h.ok(1, 2, 2),
    h.claim(10, 1, 'w1', 1), h.failed(11, 1, 'w1', 1), h.claim(20, 1, 'w2', 2), h.failed(21, 1, 'w2', 2), h.claim(30, 1, 'w1', 3), h.failed(31, 1, 'w1', 3), h.dead(31, 1, 3),
    h.claim(10, 2, 'w1', 1), h.failed(11, 2, 'w1', 1), h.claim(20, 2, 'w1', 2), h.completed(21, 2, 'w1', 2),
  ];
  const dead = job(1, 'dead', { attempts: 3, maxAttempts: 3, errorCount: 3 });
  const done = job(2, 'done', { attempts: 2, maxAttempts: 3, errorCount: 1 });
  const letter = { jobId: 1, reason: 'attempts exhausted: boom', attempts: 3, errorCount: 3 };

  it('passes when a job out of budget is dead with that many attempts, errors and its dead-letter row', () => {
    const r = checkAttemptAccounting(history, finalState([dead, done], { deadLetters: [letter] }), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 accounting errors over 2 finished jobs; 1 exhausted their budget and are dead, 0 convicted as crash loops');
    expect(r.judged).toEqual({ n: 2, what: 'finished jobs with an attempt budget' });
  });

  it('fails (negative control) when an exhausted job is not dead, or is dead without its dead-letter row, or an attempt left no error', () => {
    const stuck = checkAttemptAccounting(history, finalState([job(1, 'failed', { attempts: 3, maxAttempts: 3, errorCount: 3 }), done]), { ...bounds, minExhausted: 0 });
    expect(stuck.pass).toBe(false);
    expect(stuck.examples).toContainEqual(expect.objectContaining({ jobId: 1, why: 'failed with its whole budget used: never claimable again, never dead' }));
    const noLetter = checkAttemptAccounting(history, finalState([dead, job(2, 'done', { attempts: 2, maxAttempts: 3, errorCount: 0 })]), bounds);
    expect(noLetter.examples).toEqual(
      expect.arrayContaining([expect.objectContaining({ jobId: 1, why: 'dead with no dead-letter row' }), expect.objectContaining({ jobId: 2, why: '0 error entries, expected 1' })]),
    );
  });

  it('fails when attempts are not charged once per claim (a failure path that does not count them), or run past the budget', () => {
    const uncharged = [h.claim(10, 3, 'w1', 1), h.failed(11, 3, 'w1', 1), h.claim(20, 3, 'w1', 1), h.completed(21, 3, 'w1', 1)];
    const r = checkAttemptAccounting([...history, ...uncharged], finalState([dead, done, job(3, 'done', { attempts: 1, maxAttempts: 3, errorCount: 1 })], { deadLetters: [letter] }), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toContainEqual(expect.objectContaining({ jobId: 3, why: 'claimed as attempt 1, expected 2' }));
    const over = [h.claim(40, 1, 'w1', 4)];
    expect(checkAttemptAccounting([...history, ...over], finalState([job(1, 'dead', { attempts: 4, maxAttempts: 3, errorCount: 4 })], { deadLetters: [letter] }), bounds).pass).toBe(false);
  });

  it('fails on a job dead before its budget unless convicted as a crash loop, and lets a hand-back claim the same attempt again', () => {
    const early = [h.claim(10, 5, 'w1', 1), h.failed(11, 5, 'w1', 1), h.dead(11, 5, 1)];
    const r = checkAttemptAccounting(early, finalState([job(5, 'dead', { attempts: 1, maxAttempts: 3, errorCount: 1 })], { deadLetters: [{ jobId: 5, reason: 'attempts exhausted: boom' }] }), { ...bounds, minExhausted: 0 });
    expect(r.examples).toContainEqual(expect.objectContaining({ jobId: 5, why: 'dead before its budget, not convicted as a crash loop' }));
    const poison = [...fleet, h.claim(10, 6, 'w1', 1), h.rescuedFrom(2_000, 6, 'w1'), h.claim(2_100, 6, 'w2', 2, { crashCount: 1 }), h.rescuedFrom(4_000, 6, 'w2', { crashCount: 2, dead: true })];
    const convicted = job(6, 'dead', { attempts: 2, maxAttempts: 6, errorCount: 2, crashCount: 2 });
    const c = checkAttemptAccounting(poison, finalState([convicted], { deadLetters: [{ jobId: 6, reason: 'crashed its worker 2 times' }] }), { ...bounds, minExhausted: 0 });
    expect(c.pass).toBe(true);
    const handBack = [h.claim(10, 7, 'w1', 1), h.released(20, 7, 'w1', 1), h.claim(30, 7, 'w2', 1), h.completed(31, 7, 'w2', 1)];
    expect(checkAttemptAccounting(handBack, finalState([job(7, 'done', { attempts: 1, maxAttempts: 3, errorCount: 0 })]), { ...bounds, minExhausted: 0 }).pass).toBe(true);
  });

  it("excuses an attempt whose claim died with its worker, though that worker's own earlier claim of the job ended in a failure", () => {
    // poison-herd seed 7 (2026-12-03): w1 claims attempt 1 and reports its failure; the retry's claim (attempt 2)
    // commits, and w1 is SIGKILLed before reporting it. The rescue of attempt 2 names w1, whose only hold seen is
    // attempt 1, already ended by its failure: that hold was not the one taken back.
    const lostClaim = [h.claim(10, 8, 'w1', 1), h.failed(11, 8, 'w1', 1), h.exited(20, 'w1'), h.rescuedFrom(2_000, 8, 'w1', { attempts: 2 }), h.claim(2_100, 8, 'w2', 3, { crashCount: 1 }), h.completed(2_110, 8, 'w2', 3)];
    const r = checkAttemptAccounting(lostClaim, finalState([job(8, 'done', { attempts: 3, maxAttempts: 8, errorCount: 2, crashCount: 1 })]), { ...bounds, minExhausted: 0 });
    expect(r.examples ?? []).toEqual([]);
    expect(r.pass).toBe(true);
    // Without that rescue the skipped attempt is unexplained.
    const unexplained = lostClaim.filter((e) => e.type !== 'lease:rescued');
    expect(checkAttemptAccounting(unexplained, finalState([job(8, 'done', { attempts: 3, maxAttempts: 8, errorCount: 2 })]), { ...bounds, minExhausted: 0 }).examples).toContainEqual(
      expect.objectContaining({ jobId: 8, why: 'claimed as attempt 3, expected 2' }),
    );
  });

  it('is unknown when no job ran out of its budget', () => {
    expect(checkAttemptAccounting(history, finalState([done]), bounds).pass).toBe('unknown');
  });
});

describe('crash-loop-isolation', () => {
  const bounds = { poisonKinds: ['poison'] };
  // Poison job 1 crashes w1 beside innocent job 2 (both charged: nobody can tell yet), then runs alone on w2 and crashes it: convicted.
  const history: HistoryEvent[] = [
    ...fleet, h.invoke(0, 1, 'poison'), h.ok(1, 1, 1), h.invoke(0, 2), h.ok(1, 2, 2),
    h.claim(10, 1, 'w1', 1), h.claim(10, 2, 'w1', 1), h.exited(20, 'w1'),
    h.rescuedFrom(2_100, 1, 'w1'), h.rescuedFrom(2_100, 2, 'w1'),
    h.claim(2_200, 1, 'w2', 2, { crashCount: 1 }), h.exited(2_210, 'w2'), h.rescuedFrom(4_300, 1, 'w2', { crashCount: 2, dead: true }),
    h.claim(4_400, 2, 'w3', 2, { crashCount: 1 }), h.completed(4_410, 2, 'w3', 2),
  ];
  const final = finalState([job(1, 'dead', { kind: 'poison', crashCount: 2 }), job(2, 'done', { crashCount: 1 })], { deadLetters: [{ jobId: 1, reason: 'crashed its worker 2 times' }] });

  it('passes when the suspect ran alone, only real crashes were charged and the poison was convicted at maxCrashes', () => {
    const r = checkCrashLoopIsolation(history, final, bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 violations; 2 suspect claims, 3 crashes charged of 3 leases taken back, 1 convicted (maxCrashes 2)');
  });

  it('fails (negative control) when the suspect shares its worker and an innocent is charged with its crash', () => {
    const shared = [...history.slice(0, 11), h.claim(2_150, 3, 'w2', 1), ...history.slice(11, 13), h.rescuedFrom(4_300, 3, 'w2')];
    const r = checkCrashLoopIsolation(shared, finalState([...final.jobs, job(3, 'done', { crashCount: 1 })], { deadLetters: final.deadLetters }), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toContainEqual({ why: "charged with a suspect's crash", suspect: 1, innocent: 3, workerId: 'w2' });
  });

  it("sees an innocent charged with a suspect's crash from the rescues alone, when the killed worker's claims never arrived", () => {
    // w2's claims of the suspect and of job 3 died with it; the rescuer still says whose leases they were.
    const lost = [...history.slice(0, 11), h.exited(2_210, 'w2'), h.rescuedFrom(4_300, 1, 'w2', { crashCount: 2, dead: true }), h.rescuedFrom(4_300, 3, 'w2')];
    const r = checkCrashLoopIsolation(lost, finalState([...final.jobs, job(3, 'done', { crashCount: 1 })], { deadLetters: final.deadLetters }), bounds);
    expect(r.examples).toEqual([{ why: "charged with a suspect's crash", suspect: 1, innocent: 3, workerId: 'w2' }]);
  });

  it('fails when a crash is charged to a job whose holder was alive and heartbeating, or counted without a rescue', () => {
    const unrelated = [...fleet, h.claim(10, 5, 'w1'), h.rescuedFrom(2_100, 5, 'w1'), h.claim(2_200, 5, 'w2', 2, { crashCount: 1 }), h.completed(2_300, 5, 'w2', 2)];
    const r = checkCrashLoopIsolation(unrelated, finalState([job(5, 'done', { crashCount: 2 })]), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([
      { why: 'crash count 2, 1 rescues recorded', jobId: 5 },
      { why: 'a crash charged while its holder was alive (running and heartbeating): an unrelated fault', jobId: 5, holder: 'w1', attempt: 1 },
      // Two crashes charged reach maxCrashes: it should have been convicted too.
      { why: '2 crashes, not convicted', jobId: 5, state: 'done' },
    ]);
  });

  it("counts a crash whose rescue report died with its killed rescuer, and only then: the next claim's crash count shows it", () => {
    // w1 is killed holding job 9; w2's rescuer takes the lease back and is killed before it reports; w3 claims it again.
    const lostReport = [...fleet, h.settings(0, 'w3'), h.claim(10, 9, 'w1'), h.exited(20, 'w1'), h.exited(2_150, 'w2'), h.claim(2_200, 9, 'w3', 2, { crashCount: 1 }), h.completed(2_300, 9, 'w3', 2)];
    const r = checkCrashLoopIsolation(lostReport, finalState([job(9, 'done', { crashCount: 1 })]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 violations; 1 suspect claims, 1 crashes charged of 1 leases taken back (1 of them unreported: their rescuer was killed before it reported), 0 convicted (maxCrashes 2)');
    expect(r.judged).toEqual({ n: 2, what: 'suspect claims and leases taken back' });
    // Its claim lost too (w1 died before reporting it): the crash count of the first claim the history has.
    const claimLost = [...fleet, h.settings(0, 'w3'), h.exited(20, 'w1'), h.exited(2_150, 'w2'), h.claim(2_200, 9, 'w3', 2, { crashCount: 1 }), h.completed(2_300, 9, 'w3', 2)];
    expect(checkCrashLoopIsolation(claimLost, finalState([job(9, 'done', { crashCount: 1 })]), bounds).pass).toBe(true);
    // Negative controls: no process that could have lost the report died, or the holder was alive and heartbeating.
    const nobodyDied = lostReport.filter((e) => !(e.type === 'process:exited' && e.node === 'w2'));
    expect(checkCrashLoopIsolation(nobodyDied, finalState([job(9, 'done', { crashCount: 1 })]), bounds).examples).toEqual([{ why: 'crash count 1, 0 rescues recorded', jobId: 9 }]);
    const holderAlive = lostReport.filter((e) => !(e.type === 'process:exited' && e.node === 'w1'));
    expect(checkCrashLoopIsolation(holderAlive, finalState([job(9, 'done', { crashCount: 1 })]), bounds).examples).toEqual([
      { why: 'a crash charged while its holder was alive (running and heartbeating), its rescue unreported', jobId: 9, holder: 'w1', attempt: 1 },
    ]);
  });

  it('fails when an engine that says which expiries were crashes charges one to a live holder that stalled with heartbeats off', () => {
    const stalled = [h.settings(0, 'w3', { heartbeatMs: 0 }), h.claim(10, 8, 'w3'), { ...h.rescuedFrom(2_100, 8, 'w3'), crashed: true } as HistoryEvent, h.claim(2_200, 8, 'w3', 2, { crashCount: 1 }), h.completed(2_300, 8, 'w3', 2)];
    const r = checkCrashLoopIsolation(stalled, finalState([job(8, 'done', { crashCount: 1 })]), bounds);
    expect(r.examples).toEqual([{ why: 'a crash charged while its holder was alive (stall): an unrelated fault', jobId: 8, holder: 'w3', attempt: 1 }]);
    // The same expiry taken back without a crash (the engine saw its holder alive): nothing charged, nothing wrong.
    const spared = [stalled[0], stalled[1], { ...h.rescuedFrom(2_100, 8, 'w3'), crashed: false } as HistoryEvent, h.claim(2_200, 8, 'w3', 2), stalled[4]];
    expect(checkCrashLoopIsolation(spared, finalState([job(8, 'done', { crashCount: 0 })]), bounds).pass).toBe(true);
  });

  it('fails when a crash loop is convicted after more crashes than maxCrashes', () => {
    const late = finalState([job(1, 'dead', { kind: 'poison', crashCount: 3 }), job(2, 'done', { crashCount: 1 })], { deadLetters: final.deadLetters });
    expect(checkCrashLoopIsolation(history, late, bounds).examples).toContainEqual(expect.objectContaining({ why: 'crash count 3, 2 rescues recorded' }));
  });

  it('is unknown when nothing crashed', () => {
    expect(checkCrashLoopIsolation([...fleet, h.claim(10, 2, 'w1'), h.completed(20, 2, 'w1')], finalState([job(2, 'done', { crashCount: 0 })]), bounds).pass).toBe('unknown');
  });
});

describe('lease-fencing', () => {
  // w1 is frozen with heartbeats on past its 2 s lease; the rescuer takes it back and w2 claims the job.
  const taken: HistoryEvent[] = [
    ...fleet,
    h.claim(10, 1, 'w1', 1, { dbTime: 1_000, leaseExpiresAt: 3_000 }), ...h.frozen(100, 5_000, 'w1'),
    h.rescuedFrom(2_100, 1, 'w1', { dbTime: 3_100, leaseExpiredAt: 3_000 }), h.claim(2_200, 1, 'w2', 2, { dbTime: 3_200, crashCount: 1 }),
  ];

  it('passes when the frozen holder, resumed, has its renewal refused and records lease:lost', () => {
    const r = checkLeaseFencing([...taken, h.leaseLost(5_010, 1, 'w1', 1, 'heartbeat'), h.completed(5_100, 1, 'w2', 2)], finalState([]), {});
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 writes accepted after a takeover (of 1 takeovers); 1 of 1 live heartbeating holders recorded lease:lost (1 at heartbeat)');
    expect(r.judged).toEqual({ n: 1, what: 'leases taken from a live heartbeating holder' });
  });

  it('fails (negative control) when the old holder renews after the takeover, as an unfenced renewal does, and never learns', () => {
    const r = checkLeaseFencing([...taken, h.renewed(5_010, 1, 'w1', 1, 6_000, 8_000)], finalState([]), {});
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([
      { overlap: { jobId: 1, holder: 'w1', attempt: 1, accepted: 'renewal', renewedAt: 6_000, takenAt: 3_100 } },
      { unaware: { jobId: 1, holder: 'w1', attempt: 1, why: 'lease taken over while alive with heartbeats on, and no lease:lost recorded' } },
    ]);
  });

  it('does not judge a holder killed before it could learn, and is unknown with no live holder taken over', () => {
    const r = checkLeaseFencing([...taken, h.exited(5_001, 'w1')], finalState([]), {});
    expect(r.pass).toBe('unknown');
  });
});

describe('parameters-honoured', () => {
  const bounds = { slackMs: 2, heartbeatLateMs: 250 };
  const good: HistoryEvent[] = [
    ...fleet,
    // Attempt 2's ceiling is min(8 s, 1 s x 2) = 2 s.
    h.failed(10, 1, 'w1', 2, { dbTime: 1_000, retryAt: 2_900 }),
    h.claim(10, 2, 'w1', 1, { dbTime: 1_000, leaseExpiresAt: 3_000 }),
    h.renewed(520, 2, 'w1', 1, 1_510, 3_510),
    h.renewed(1_040, 2, 'w1', 1, 2_030, 4_030),
  ];

  it('passes when delays, leases and heartbeats are what the worker said it would do', () => {
    const r = checkParametersHonoured(good, finalState([]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 off their settings; 1 retry delays, 3 lease lengths, 2 heartbeat gaps judged (median of the workers\' medians 510 ms)');
    expect(r.judged).toEqual({ n: 6, what: 'retry delays, lease lengths and heartbeat gaps' });
  });

  it('fails (negative control) on a retry past its ceiling, a lease of the wrong length and a heartbeat too slow', () => {
    const bad: HistoryEvent[] = [
      ...fleet,
      h.failed(10, 1, 'w1', 2, { dbTime: 1_000, retryAt: 3_500 }),
      h.claim(10, 2, 'w1', 1, { dbTime: 1_000, leaseExpiresAt: 4_000 }),
      h.renewed(1_600, 2, 'w1', 1, 2_500, 4_500),
    ];
    const r = checkParametersHonoured(bad, finalState([]), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([
      { what: 'retry delay outside [0, ceiling]', jobId: 1, attempt: 2, delayMs: 2_500, ceilingMs: 2_000 },
      { what: 'claim lease of 3,000 ms, configured 2,000', jobId: 2, attempt: 1, workerId: 'w1' },
      { what: 'renewal lease of 2,000 ms, configured 2,000', jobId: 2, attempt: 1, workerId: 'w1' },
      { what: 'median first renewal gap 1,500 ms over 1 renewals, heartbeatMs 500', workerId: 'w1', queue: 'default' },
    ].filter((x) => !x.what.startsWith('renewal lease')));
  });

  it("holds each worker's period, not each claim's: one late timer on a busy machine passes, a slow schedule (negative control) fails", () => {
    // Jobs 2-6 each renewed once: four on time, one 300 ms late (its worker's event loop was busy).
    const renewedAfter = (gapsMs: number[]): HistoryEvent[] =>
      gapsMs.flatMap((gap, k) => [h.claim(10 + k, 2 + k, 'w1', 1, { dbTime: 1_000, leaseExpiresAt: 3_000 }), h.renewed(10 + k + gap, 2 + k, 'w1', 1, 1_000 + gap, 3_000 + gap)]);
    const oneLate = checkParametersHonoured([...fleet, ...renewedAfter([505, 510, 503, 800, 507])], finalState([]), bounds);
    expect(oneLate).toMatchObject({ pass: true, figure: expect.stringContaining("5 heartbeat gaps judged (median of the workers' medians 507 ms)") });
    const slow = checkParametersHonoured([...fleet, ...renewedAfter([790, 810, 800, 805, 795])], finalState([]), bounds);
    expect(slow.examples).toEqual([{ what: 'median first renewal gap 800 ms over 5 renewals, heartbeatMs 500', workerId: 'w1', queue: 'default' }]);
    // A schedule that starts late, on time after that: two long jobs renewed 800 ms after their claims, then every 505 ms.
    const lateStart = [1, 2].flatMap((job) => [
      h.claim(10, job, 'w1', 1, { dbTime: 1_000, leaseExpiresAt: 3_000 }),
      ...[0, 1, 2, 3, 4].map((k) => h.renewed(810 + k * 505, job, 'w1', 1, 1_800 + k * 505, 3_800 + k * 505)),
    ]);
    expect(checkParametersHonoured([...fleet, ...lateStart], finalState([]), bounds).examples).toEqual([
      { what: 'median first renewal gap 800 ms over 2 renewals, heartbeatMs 500', workerId: 'w1', queue: 'default' },
    ]);
  });

  it('leaves out a renewal gap across a step of the database clock, which measures the step (negative control: the same gap without the step)', () => {
    const acrossStep = (steps: HistoryEvent[]): HistoryEvent[] => [
      ...fleet,
      h.claim(10, 2, 'w1', 1, { dbTime: 1_000, leaseExpiresAt: 3_000 }),
      ...steps,
      h.renewed(520, 2, 'w1', 1, 3_601_510, 3_603_510), // 510 ms later by the worker; the database clock stepped an hour between
    ];
    const step = { t: 300, node: 'nemesis', type: 'fault:injected', fault: 'db-clock-jump', detail: { jumpMs: 3_600_000, committedByT: 310 } } as HistoryEvent;
    const r = checkParametersHonoured(acrossStep([step]), finalState([]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 off their settings; 0 retry delays, 2 lease lengths, 0 heartbeat gaps judged');
    expect(checkParametersHonoured(acrossStep([]), finalState([]), bounds).examples).toEqual([
      { what: 'median first renewal gap 3,600,510 ms over 1 renewals, heartbeatMs 500', workerId: 'w1', queue: 'default' },
    ]);
  });

  it('is unknown without settings or with nothing to judge', () => {
    expect(checkParametersHonoured(good.slice(2), finalState([]), bounds).pass).toBe('unknown');
    expect(checkParametersHonoured(fleet, finalState([]), bounds).pass).toBe('unknown');
  });
});
