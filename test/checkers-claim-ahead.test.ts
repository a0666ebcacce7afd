// no-start-after-stop and claim-ahead-lease on small hand-written histories: a stopping worker that starts a job
// it claimed ahead fails, one that hands it back passes; a claimed-ahead wait past the lease must be renewed throughout.
import { describe, expect, it } from 'vitest';
import { checkClaimAheadLease } from '../harness/checkers/claim-ahead-lease.ts';
import { checkNoStartAfterStop } from '../harness/checkers/no-start-after-stop.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h } from './support/history-builder.ts';

const final = finalState([]);
const started = (t: number, jobId: number, workerId: string, nodeTime = t): HistoryEvent => ({ t, node: workerId, nodeTime, type: 'job:started', jobId, queue: 'default', attempt: 1, workerId });
const stopping = (t: number, workerId: string): HistoryEvent => ({ t, node: workerId, type: 'worker:stopping', workerId });

describe('no-start-after-stop', () => {
  // w1 runs job 1 and holds job 2 claimed ahead when it is told to stop.
  const before: HistoryEvent[] = [h.claim(10, 1, 'w1'), h.claim(10, 2, 'w1'), started(11, 1, 'w1'), stopping(500, 'w1')];

  it('passes when the stopping worker hands its claimed-ahead job back', () => {
    const r = checkNoStartAfterStop([...before, h.released(510, 2, 'w1'), h.completed(600, 1, 'w1')], final);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 1, what: 'jobs a stopping worker held unstarted' });
  });

  it('fails (negative control) when it starts the job instead', () => {
    const r = checkNoStartAfterStop([...before, started(510, 2, 'w1'), h.completed(3_600, 2, 'w1')], final);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 2, attempt: 1, workerId: 'w1', t: 510 }]);
  });

  it('is unknown when no stop found a job waiting', () => {
    expect(checkNoStartAfterStop([h.claim(10, 1, 'w1'), started(11, 1, 'w1'), stopping(500, 'w1')], final).pass).toBe('unknown');
  });
});

describe('claim-ahead-lease', () => {
  // Lease 2 s, heartbeats every 500 ms; job 1 claimed at db 10,000 (lease to 12,000) waits 3 s for a slot.
  const claim = { ...h.claim(10, 1, 'w1', 1, { dbTime: 10_000, leaseExpiresAt: 12_000 }), nodeTime: 10 } as HistoryEvent;
  const settings = h.settings(0, 'w1');

  it('passes when the lease was renewed while the job waited', () => {
    const renewals = [10_500, 11_000, 11_500, 12_000, 12_500].map((db, k) => h.renewed(510 + k * 500, 1, 'w1', 1, db, db + 2_000));
    const r = checkClaimAheadLease([settings, claim, ...renewals, started(3_010, 1, 'w1')], final, { slackMs: 50 });
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 1, what: 'claimed-ahead waits longer than the lease' });
  });

  it('fails (negative control) when nothing renewed it before it started', () => {
    const r = checkClaimAheadLease([settings, claim, started(3_010, 1, 'w1'), h.renewed(3_510, 1, 'w1', 1, 13_500, 15_500)], final, { slackMs: 50 });
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 1, attempt: 1, workerId: 'w1', waitedMs: 3_000, leaseMs: 2_000, leaseEndedBeforeStartByMs: 1_000 }]);
  });

  it('fails (negative control) when the worker gave the job up unrun after a wait longer than the lease', () => {
    const lost: HistoryEvent = { t: 3_010, node: 'w1', nodeTime: 3_010, type: 'lease:lost', jobId: 1, queue: 'default', attempt: 1, workerId: 'w1', phase: 'expired' };
    const r = checkClaimAheadLease([settings, claim, lost], final, { slackMs: 50 });
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 1, attempt: 1, workerId: 'w1', waitedMs: 3_000, leaseMs: 2_000, givenUpUnrun: true }]);
  });

  it('is unknown when no job waited longer than its lease', () => {
    expect(checkClaimAheadLease([settings, claim, started(1_010, 1, 'w1')], final, { slackMs: 50 }).pass).toBe('unknown');
  });
});
