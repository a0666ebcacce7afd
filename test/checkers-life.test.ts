import { describe, expect, it } from 'vitest';
import { checkNoEarlyStart } from '../harness/checkers/no-early-start.ts';
import { checkNoEarlyTakeover } from '../harness/checkers/no-early-takeover.ts';
import { checkNoPhantomFinish } from '../harness/checkers/no-phantom-finish.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h, job } from './support/history-builder.ts';

// Convention: op n became job n; workers w1 and w2 report their settings first (lease 2 s, heartbeats every 500 ms).
const fleet = [h.settings(0, 'w1'), h.settings(0, 'w2')];

describe('no-early-start', () => {
  const retried = (claimDb: number): HistoryEvent[] => [
    h.claim(10, 1, 'w1', 1, { dbTime: 1_000, runAt: 900 }),
    h.failed(20, 1, 'w1', 1, { dbTime: 1_100, retryAt: 1_600 }),
    // The claim query reports the row's run_at; a claim that ignored it would still report the truth.
    h.claim(30, 1, 'w2', 2, { dbTime: claimDb, runAt: 1_600 }),
  ];

  it('passes when a retry in backoff is claimed at or after the run_at its failure scheduled', () => {
    const r = checkNoEarlyStart(retried(1_600), finalState([job(1, 'done')]), {});
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 of 2 claims before their run_at; judged 1 retries in backoff, 0 delayed jobs, 0 cron rows');
    // The first claim, due when written, could not have been early: only the retry is judged.
    expect(r.judged).toEqual({ n: 1, what: 'claims that could have been early (retries in backoff, delayed jobs, cron rows)' });
  });

  it('fails (negative control) when a retry is claimed during its backoff, as a claim ignoring run_at would', () => {
    const r = checkNoEarlyStart(retried(1_250), finalState([job(1, 'done')]), {});
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 1, attempt: 2, workerId: 'w2', claimedAt: 1_250, dueAt: 1_600, earlyByMs: 350, due: 'run_at at claim' }]);
  });

  it("holds a delayed job to the run_at its enqueue acknowledged, even when the claim reports another", () => {
    const history = [
      { ...h.ok(0, 1, 1, 'default', { runAt: 5_000 }), delayMs: 4_000 } as HistoryEvent,
      h.claim(10, 1, 'w1', 1, { dbTime: 4_000, runAt: 3_000 }),
    ];
    const r = checkNoEarlyStart(history, finalState([job(1, 'done')]), {});
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([expect.objectContaining({ earlyByMs: 1_000, due: 'run_at at enqueue' })]);
  });

  it('is unknown when every job was due the moment it was written (nothing could have started early)', () => {
    const history = [h.ok(0, 1, 1, 'default', { runAt: 1_000 }), h.claim(10, 1, 'w1', 1, { dbTime: 1_010, runAt: 1_000 })];
    const r = checkNoEarlyStart(history, finalState([job(1, 'done')]), {});
    expect(r.pass).toBe('unknown');
    expect(r.judged.n).toBe(0);
  });

  it('judges cron rows, written ahead of their occurrence', () => {
    const history = [h.claim(10, 7, 'w1', 1, { dbTime: 59_000, runAt: 60_000 })];
    const r = checkNoEarlyStart(history, finalState([job(7, 'done', { idempotencyKey: 'cron:minutely:1970-01-01T00:01:00.000Z' })]), {});
    expect(r.pass).toBe(false);
    expect(r.figure).toMatch(/1 cron rows$/);
  });
});

describe('no-phantom-finish', () => {
  it('passes when each done job was completed by its holder, or finished by its last holder\'s committed effect', () => {
    const history = [...fleet, h.claim(10, 1, 'w1'), h.completed(20, 1, 'w1'), h.claim(10, 2, 'w1'), h.rescuedFrom(3_000, 2, 'w1'), h.claim(3_100, 2, 'w2', 2)];
    const r = checkNoPhantomFinish(history, finalState([job(1, 'done'), job(2, 'done')], { effectRows: [{ key: 'op:2', jobId: 2, workerId: 'w2' }] }), {});
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 phantom and 0 unexpected of 2 done jobs; 1 completed by their holder, 1 by their holder\'s committed effect, 0 unconfirmed (holder killed, or its reply lost, before reporting)');
    expect(r.judged).toEqual({ n: 2, what: 'done jobs (unconfirmed ones left out)' });
  });

  it('fails (negative control) when a job is done but only a worker that had lost the lease completed it, as unfenced completion does', () => {
    const history = [...fleet, h.claim(10, 1, 'w1'), h.rescuedFrom(3_000, 1, 'w1'), h.claim(3_100, 1, 'w2', 2), h.completed(3_200, 1, 'w1'), h.leaseLost(3_300, 1, 'w2', 2, 'complete')];
    const r = checkNoPhantomFinish(history, finalState([job(1, 'done', { attempts: 2 })]), {});
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ phantom: { jobId: 1, why: 'completed only by a worker that had lost the lease', completedBy: 'w1', attempt: 1 } }]);
  });

  it('fails when a job is done with no completion at all and its holder alive (finished by nobody)', () => {
    const history = [...fleet, h.claim(10, 1, 'w1'), h.rescuedFrom(3_000, 1, 'w1')];
    const r = checkNoPhantomFinish(history, finalState([job(1, 'done')]), {});
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ phantom: { jobId: 1, why: 'done with no completion by its holder', lastHolder: 'w1', attempt: 1 } }]);
  });

  it('counts, without failing, a done job whose holder was killed before it could report', () => {
    const history = [...fleet, h.claim(10, 1, 'w1'), h.exited(15, 'w1')];
    const r = checkNoPhantomFinish(history, finalState([job(1, 'done')]), {});
    expect(r.pass).toBe(true);
    expect(r.figure).toMatch(/1 unconfirmed/);
  });

  it('fails on an effect committed by a worker that was not the last holder, and on a completion of a job left unfinished', () => {
    const history = [...fleet, h.claim(10, 1, 'w1'), h.rescuedFrom(3_000, 1, 'w1'), h.claim(3_100, 1, 'w2', 2), h.claim(10, 2, 'w1'), h.completed(20, 2, 'w1')];
    const r = checkNoPhantomFinish(history, finalState([job(1, 'done'), job(2, 'pending')], { effectRows: [{ key: 'op:1', jobId: 1, workerId: 'w1' }] }), {});
    expect(r.pass).toBe(false);
    expect(r.figure).toMatch(/^1 phantom and 1 unexpected/);
  });

  it('tells two holds of the same worker and attempt apart by their lease tokens (a claim a failover lost, made again)', () => {
    // w1's first hold (token a) lost its lease, reported after w1's second claim (token b), which completed.
    const history = [...fleet, h.token(h.claim(10, 1, 'w1'), 'a'), h.token(h.claim(40, 1, 'w1'), 'b'), h.token(h.leaseLost(45, 1, 'w1', 1, 'complete'), 'a'), h.token(h.completed(50, 1, 'w1'), 'b')];
    expect(checkNoPhantomFinish(history, finalState([job(1, 'done')]), {}).pass).toBe(true);
    // Negative control: only the first hold completed, after the second claim; the second lost its lease.
    const stale = [...fleet, h.token(h.claim(10, 1, 'w1'), 'a'), h.token(h.claim(40, 1, 'w1'), 'b'), h.token(h.completed(45, 1, 'w1'), 'a'), h.token(h.leaseLost(50, 1, 'w1', 1, 'complete'), 'b')];
    const r = checkNoPhantomFinish(stale, finalState([job(1, 'done')]), {});
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ phantom: { jobId: 1, why: 'completed only by a worker that had lost the lease', completedBy: 'w1', attempt: 1 } }]);
  });

  it('is unknown when no job is done', () => {
    expect(checkNoPhantomFinish(fleet, finalState([job(1, 'dead')]), {}).pass).toBe('unknown');
  });
});

describe('no-early-takeover', () => {
  const bounds = { slackMs: 1 };
  const claimed = h.claim(10, 1, 'w1', 1, { dbTime: 1_000, leaseExpiresAt: 3_000 });

  it('passes when each redelivery follows a failure, a hand-back or deferral, or an expiry after a kill, a freeze, a stall, an outage or a step of the database clock', () => {
    const history: HistoryEvent[] = [
      ...fleet,
      h.settings(0, 'w3', { heartbeatMs: 0 }),
      // failure, then retry
      h.claim(10, 1, 'w1', 1, { dbTime: 1_000 }), h.failed(20, 1, 'w1', 1, { dbTime: 1_010 }), h.claim(30, 1, 'w2', 2, { dbTime: 1_500 }),
      // hand-back at shutdown
      h.claim(10, 2, 'w1'), h.released(40, 2, 'w1'), h.claim(50, 2, 'w2'),
      // killed: the lease runs out, is rescued after its end, claimed again
      h.claim(10, 3, 'w2', 1, { dbTime: 1_000, leaseExpiresAt: 3_000 }), h.exited(100, 'w2'), h.rescuedFrom(2_100, 3, 'w2', { dbTime: 3_050, leaseExpiredAt: 3_000 }), h.claim(2_200, 3, 'w1', 2),
      // stalled with heartbeats off
      h.claim(10, 4, 'w3', 1, { dbTime: 1_000, leaseExpiresAt: 3_000 }), h.rescuedFrom(2_100, 4, 'w3', { dbTime: 3_100, leaseExpiredAt: 3_000 }), h.claim(2_200, 4, 'w1', 2),
      // frozen with heartbeats on: renewed once, then the lease ran out
      h.claim(10, 5, 'w1', 1, { dbTime: 1_000, leaseExpiresAt: 3_000 }), h.renewed(510, 5, 'w1', 1, 1_500, 3_500), ...h.frozen(600, 6_000, 'w1'),
      h.rescuedFrom(2_700, 5, 'w1', { dbTime: 3_600, leaseExpiredAt: 3_500 }), h.claim(2_800, 5, 'w2', 2),
      // deferred (its effect held by another holder's open transaction), then claimed again uncharged
      h.claim(10, 6, 'w1'), h.deferred(20, 6, 'w1'), h.claim(300, 6, 'w1'), h.completed(310, 6, 'w1'),
      // a live heartbeating holder whose renewals could not reach a restarting database
      h.settings(0, 'w4'), h.claim(10, 7, 'w4', 1, { dbTime: 1_000, leaseExpiresAt: 3_000 }), h.fault(500, 'db-restart', { downS: 3 }),
      h.rescuedFrom(4_100, 7, 'w4', { dbTime: 5_050, leaseExpiredAt: 3_000 }), h.claim(4_200, 7, 'w1', 2),
      // a live heartbeating holder whose lease end the database clock stepped over
      h.settings(0, 'w5'), h.claim(5_000, 8, 'w5', 1, { dbTime: 6_000, leaseExpiresAt: 8_000 }), h.fault(5_600, 'db-clock-jump', { dbBeforeMs: 6_600, dbAfterMs: 3_606_600 }),
      h.rescuedFrom(5_700, 8, 'w5', { dbTime: 3_606_700, leaseExpiredAt: 8_000 }), h.claim(5_800, 8, 'w1', 2),
      // w6's link partitioned (docs/network-faults.md) while it held job 9: its lease ran out, cut off.
      h.settings(0, 'w6'), h.claim(6_000, 9, 'w6', 1, { dbTime: 6_000, leaseExpiresAt: 8_000 }),
      h.fault(6_100, 'partition', { seq: 9, target: 'w6', forS: 5 }), h.rescuedFrom(8_100, 9, 'w6', { dbTime: 8_100, leaseExpiredAt: 8_000 }), h.claim(8_200, 9, 'w1', 2),
      h.fault(11_100, 'partition', { seq: 9, target: 'w6', phase: 'end' }),
    ];
    const r = checkNoEarlyTakeover(history, finalState([]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 taken back before their lease ended and 0 unexplained, of 9 redeliveries and 6 rescues; causes: 1 failure, 1 hand-back, 1 deferral, 1 kill, 1 freeze, 1 stall, 1 outage, 1 clock-step, 1 cut-off, 0 slow-clock');
    expect(r.judged).toEqual({ n: 15, what: 'redeliveries and rescues' });
  });

  it('takes a database clock step as the window from its start to its known commit: a claim in between still had its lease end stepped over', () => {
    // The step began at t=5,000 and was known committed at 5,400; w5 claimed at 5,100, before the commit.
    const step = (x: Record<string, unknown>) => h.fault(5_000, 'db-clock-jump', { dbBeforeMs: 6_000, dbAfterMs: 3_606_000, ...x });
    const rest = [
      h.settings(0, 'w5'), h.claim(5_100, 8, 'w5', 1, { dbTime: 6_100, leaseExpiresAt: 8_100 }),
      h.rescuedFrom(5_500, 8, 'w5', { dbTime: 3_606_500, leaseExpiredAt: 8_100 }), h.claim(5_600, 8, 'w1', 2),
    ];
    const r = checkNoEarlyTakeover([...fleet, step({ committedByT: 5_400 }), ...rest], finalState([]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toMatch(/1 clock-step, 0 cut-off, 0 slow-clock$/);
    // Negative control: a step known only as its start, before the claim, explains nothing after it.
    expect(checkNoEarlyTakeover([...fleet, step({}), ...rest], finalState([]), bounds).pass).toBe(false);
  });

  it('explains the expiry of a live heartbeating holder whose clock ran slow meanwhile (negative control: the same expiry without the fault)', () => {
    const rest = [
      h.claim(1_000, 1, 'w1', 1, { dbTime: 1_000, leaseExpiresAt: 3_000 }),
      h.rescuedFrom(5_000, 1, 'w1', { dbTime: 5_000, leaseExpiredAt: 3_000 }), h.claim(5_100, 1, 'w2', 2),
    ];
    const slow = [h.fault(500, 'clock-rate', { seq: 0, target: 'w1', rate: 0.25, forS: 13 }), h.fault(13_500, 'clock-rate', { seq: 0, target: 'w1', phase: 'end' })];
    const r = checkNoEarlyTakeover([...fleet, ...slow, ...rest], finalState([]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toMatch(/1 slow-clock$/);
    expect(checkNoEarlyTakeover([...fleet, ...rest], finalState([]), bounds).pass).toBe(false);
  });

  it('takes a rescue for the attempt it reports, also when the same worker claimed the job again within the same database millisecond', () => {
    const history: HistoryEvent[] = [
      ...fleet,
      h.settings(0, 'w3', { heartbeatMs: 0 }),
      h.claim(10, 1, 'w3', 1, { dbTime: 1_000, leaseExpiresAt: 3_000 }),
      h.rescuedFrom(2_100, 1, 'w3', { dbTime: 3_050, leaseExpiredAt: 3_000, attempts: 1 }),
      h.claim(2_105, 1, 'w3', 2, { dbTime: 3_050, leaseExpiresAt: 5_050 }),
      h.completed(2_200, 1, 'w3', 2),
    ];
    const r = checkNoEarlyTakeover(history, finalState([]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toMatch(/^0 taken back before their lease ended and 0 unexplained, of 1 redeliveries and 1 rescues/);
    expect(checkNoPhantomFinish(history, finalState([job(1, 'done', { attempts: 2 })]), {}).pass).toBe(true);
  });

  it('places a claim reported only after its frozen worker resumed where the database says it happened', () => {
    // w1 claimed at db 1,000 and froze before it could report; the rescue and w2's claim are recorded first.
    const history: HistoryEvent[] = [
      ...fleet, { t: 100, node: 'w1', type: 'fault:evidence', fault: 'worker-stop', detail: { point: 'in-effect' } }, h.rescuedFrom(2_100, 1, 'w1', { dbTime: 3_050, leaseExpiredAt: 3_000 }),
      h.claim(2_200, 1, 'w2', 2, { dbTime: 3_100 }), h.fault(5_000, 'worker-stop', { target: 'w1', phase: 'end' }),
      h.claim(5_001, 1, 'w1', 1, { dbTime: 1_000, leaseExpiresAt: 3_000 }), h.leaseLost(5_002, 1, 'w1', 1, 'complete'),
    ];
    const r = checkNoEarlyTakeover(history, finalState([]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toMatch(/of 1 redeliveries and 1 rescues; causes: .*1 freeze/);
  });

  it('fails (negative control) when the rescuer takes a lease back before it ended, by the renewal the holder reported', () => {
    const history = [...fleet, claimed, h.exited(100, 'w1'), h.renewed(60, 1, 'w1', 1, 1_500, 3_500), h.rescuedFrom(2_100, 1, 'w1', { dbTime: 3_200, leaseExpiredAt: 3_000 }), h.claim(2_200, 1, 'w2', 2)];
    const r = checkNoEarlyTakeover(history, finalState([]), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ early: { jobId: 1, rescuedAt: 3_200, leaseEnd: 3_500, earlyByMs: 300, owner: 'w1' } }]);
  });

  it('fails when a job is claimed again while its lease still runs, with no rescue recorded', () => {
    const history = [...fleet, claimed, h.claim(20, 1, 'w2', 2, { dbTime: 1_020 })];
    const r = checkNoEarlyTakeover(history, finalState([]), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ early: { jobId: 1, reclaimedAt: 1_020, leaseEnd: 3_000, earlyByMs: 1_980, heldBy: 'w1', claimedBy: 'w2' } }]);
  });

  it('fails on a redelivery with no recorded cause, even after the lease ended: a live, heartbeating holder lost it', () => {
    const history = [...fleet, claimed, h.rescuedFrom(2_100, 1, 'w1', { dbTime: 3_050, leaseExpiredAt: 3_000 }), h.claim(2_200, 1, 'w2', 2)];
    const r = checkNoEarlyTakeover(history, finalState([]), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ unexplained: expect.objectContaining({ jobId: 1, heldBy: 'w1', how: 'rescued while its holder was alive, running and heartbeating' }) }]);
  });

  it('is unknown when nothing was redelivered, and when the workers never reported their settings', () => {
    expect(checkNoEarlyTakeover([...fleet, claimed], finalState([]), bounds).pass).toBe('unknown');
    expect(checkNoEarlyTakeover([claimed, h.claim(20, 1, 'w2', 2)], finalState([]), bounds).pass).toBe('unknown');
  });
});
