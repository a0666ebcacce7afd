// The invariants of link and database-host faults (docs/job-life-checks.md,
// docs/network-faults.md) on hand-written histories: each passes on a good
// one, fails on a violating one (its negative control at unit level), and
// says unknown when nothing it judges happened.
import { describe, expect, it } from 'vitest';
import { checkHandlerAborted } from '../harness/checkers/handler-aborted-on-lease-loss.ts';
import { checkNoChargeForDbFaults } from '../harness/checkers/no-charge-for-db-faults.ts';
import { checkRecoversAfterHeal } from '../harness/checkers/recovers-after-heal.ts';
import { checkUnknownOutcomeResolved } from '../harness/checkers/unknown-outcome-resolved.ts';
import type { EventOf, FinalState, HistoryEvent } from '../harness/history.ts';
import { h } from './support/history-builder.ts';

const empty: FinalState = { jobs: [], deadLetters: [], effects: {} };
const doneJobs = (...ids: number[]): FinalState => ({ ...empty, jobs: ids.map((id) => ({ id, queue: 'default', state: 'done', attempts: 1, priority: 0, idempotencyKey: null, runAtMs: 0 })) });

/** worker-0 cut off both ways from `fromT` to `toT`. */
const partition = (fromT: number, toT: number, node = 'worker-0'): HistoryEvent[] => [
  h.fault(fromT, 'partition', { seq: 1, target: node, direction: 'both', forS: (toT - fromT) / 1000 }),
  h.fault(toT, 'partition', { seq: 1, target: node, phase: 'end' }),
];
const settings = [h.settings(0, 'worker-0.1', { node: 'worker-0', leaseMs: 3_000 }), h.settings(0, 'worker-1.1', { node: 'worker-1', leaseMs: 3_000 })];
/** A claim by `node` at t, its lease ending 3 s later on a database clock that reads t (offset 0). */
const claim = (t: number, jobId: number, node: string, attempt = 1) => h.claim(t, jobId, `${node}.1`, attempt, { node, dbTime: t, leaseExpiresAt: t + 3_000 });
const started = (t: number, jobId: number, node: string): HistoryEvent => ({ t, node, type: 'job:started', jobId, queue: 'default', attempt: 1, workerId: `${node}.1` });
const renewed = (t: number, jobId: number, node: string): HistoryEvent => ({ ...h.renewed(t, jobId, `${node}.1`, 1, t, t + 3_000), node });
const lost = (t: number, jobId: number, node: string, phase: EventOf<'lease:lost'>['phase'], handlerMs?: number): HistoryEvent => ({
  ...h.leaseLost(t, jobId, `${node}.1`, 1, phase),
  node,
  ...(handlerMs !== undefined ? { handlerMs } : {}),
});

describe('recovers-after-heal', () => {
  const bounds = { rescueIntervalMs: 500, slackMs: 1_000, heldClaimMs: 1_000 };
  it('passes when every job the cut-off worker held is taken back, or handed back at the heal', () => {
    // Job 8's claim was held by the partition and answered at the heal: its worker hands it back at once.
    const handedBack: HistoryEvent = { ...h.deferred(7_050, 8, 'worker-0.1'), node: 'worker-0' };
    const hist = [...settings, claim(100, 7, 'worker-0'), ...partition(1_000, 7_000), h.rescuedFrom(4_500, 7, 'worker-0.1'), claim(7_010, 8, 'worker-0'), lost(7_011, 8, 'worker-0', 'expired'), handedBack, claim(7_200, 7, 'worker-1', 2)];
    const r = checkRecoversAfterHeal(hist, doneJobs(7, 8), bounds);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 2, what: 'jobs held by a cut-off worker' });
  });
  it('fails when a job claimed through the partition waits out a whole lease after the heal', () => {
    const hist = [...settings, ...partition(1_000, 7_000), claim(7_010, 8, 'worker-0'), lost(7_011, 8, 'worker-0', 'expired'), h.rescuedFrom(10_500, 8, 'worker-0.1'), claim(10_600, 8, 'worker-1', 2)];
    const r = checkRecoversAfterHeal(hist, doneJobs(8), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples?.[0]).toMatchObject({ jobId: 8, movingAgainAfterMs: 3_500 });
  });
  it('is unknown when the cut-off worker held nothing', () => {
    expect(checkRecoversAfterHeal([...settings, ...partition(1_000, 7_000)], empty, bounds).pass).toBe('unknown');
  });
});

describe('handler-aborted-on-lease-loss', () => {
  const bounds = { slackMs: 100 };
  it('passes when the cut-off holder aborts before its lease ends and before the takeover', () => {
    const hist = [...settings, claim(0, 7, 'worker-0'), started(5, 7, 'worker-0'), renewed(900, 7, 'worker-0'), ...partition(1_000, 8_000), lost(3_850, 7, 'worker-0', 'expired'), claim(5_000, 7, 'worker-1', 2)];
    const r = checkHandlerAborted(hist, empty, bounds);
    expect(r.pass).toBe(true);
    expect(r.judged.n).toBe(1);
  });
  it('fails when the handler ran on past its lease (a refused completion of a handler that returned late)', () => {
    // Started at 10, returned 6 s later: 3 s past its lease, and past the takeover at 5 s.
    const hist = [...settings, claim(0, 7, 'worker-0'), started(10, 7, 'worker-0'), ...partition(1_000, 8_000), claim(5_000, 7, 'worker-1', 2), lost(8_100, 7, 'worker-0', 'complete', 6_000)];
    const r = checkHandlerAborted(hist, empty, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples?.[0]).toMatchObject({ jobId: 7, how: 'settled', takenBy: 'worker-1' });
  });
  it('passes a claim whose answer the partition held, given up unrun after its lease and its rescue', () => {
    // The database claimed job 9 for worker-0 at 900 (lease to 3,900); the answer came as the link healed, after a rescue.
    const late = h.claim(6_995, 9, 'worker-0.1', 1, { node: 'worker-0', dbTime: 900, leaseExpiresAt: 3_900 });
    const hist = [...settings, ...partition(1_000, 7_000), h.rescuedFrom(4_500, 9, 'worker-0.1'), late, lost(7_010, 9, 'worker-0', 'expired'), claim(7_500, 9, 'worker-1', 2)];
    const r = checkHandlerAborted(hist, empty, bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toContain('1 never started');
    expect(checkRecoversAfterHeal(hist, doneJobs(9), { rescueIntervalMs: 500, slackMs: 1_000, heldClaimMs: 1_000 }).pass).toBe(true);
  });
  it('keeps two holds of the same attempt apart: a claim given up unrun, then claimed again by the same worker', () => {
    // Given up unrun at the heal, job 9 goes back uncharged and worker-0 claims attempt 1 again; that second hold
    // starts, and its effect begins, long after the first hold's lease: they are the second hold's, not the first's.
    const late = h.claim(6_995, 9, 'worker-0.1', 1, { node: 'worker-0', dbTime: 900, leaseExpiresAt: 3_900 });
    const again = [claim(7_020, 9, 'worker-0'), started(8_000, 9, 'worker-0'), { ...h.effectStarted(8_500, 9, 'worker-0.1'), node: 'worker-0' }];
    const hist = [...settings, ...partition(1_000, 7_000), h.rescuedFrom(4_500, 9, 'worker-0.1'), late, lost(7_010, 9, 'worker-0', 'expired'), ...again];
    const r = checkHandlerAborted(hist, empty, bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toContain('1 never started');
    // Negative control: the same first hold with its handler started and its effect begun after its lease ended.
    const ranLate = [...settings, claim(100, 5, 'worker-1'), ...partition(1_000, 7_000), late, started(7_000, 9, 'worker-0'), { ...h.effectStarted(7_500, 9, 'worker-0.1'), node: 'worker-0' }, lost(7_600, 9, 'worker-0', 'complete', 600)];
    expect(checkHandlerAborted(ranLate, empty, bounds).pass).toBe(false);
  });
  it('is unknown with no hold during a cut', () => {
    const done: HistoryEvent = { ...h.completed(50, 7, 'worker-0.1'), node: 'worker-0' };
    expect(checkHandlerAborted([...settings, claim(0, 7, 'worker-0'), done, ...partition(1_000, 2_000)], empty, bounds).pass).toBe('unknown');
  });
});

describe('unknown-outcome-resolved', () => {
  const cut = (point: string, detail: Record<string, unknown>) => h.evidence(2_000, 'reset-after-commit', { seq: 1, point, ...detail });
  it('passes when each cut write resolved: one job for the key, a done completion not rerun, one effect', () => {
    const hist = [
      cut('enqueue', { key: 'cut:1' }),
      { t: 2_010, node: 'nemesis', type: 'enqueue:retried', key: 'cut:1', firstJobId: 9, retryJobId: 9 } as HistoryEvent,
      cut('complete', { jobIds: [7] }),
      cut('effect', { jobIds: [8], key: 'job:8' }),
    ];
    const final: FinalState = { ...doneJobs(7, 8, 9), effects: { 'job:8': 1 } };
    final.jobs[2].producerKey = 'cut:1';
    const r = checkUnknownOutcomeResolved(hist, final);
    expect(r.pass).toBe(true);
    expect(r.judged.n).toBe(3);
  });
  it('fails when a re-sent enqueue made a second job, or a completed job ran again', () => {
    const hist = [
      cut('enqueue', { key: 'cut:1' }),
      { t: 2_010, node: 'nemesis', type: 'enqueue:retried', key: 'cut:1', firstJobId: 9, retryJobId: 10 } as HistoryEvent,
      cut('complete', { jobIds: [7] }),
      claim(2_500, 7, 'worker-1', 2),
    ];
    const final = doneJobs(7, 9, 10);
    final.jobs[1].producerKey = 'cut:1';
    final.jobs[2].producerKey = 'cut:1';
    const r = checkUnknownOutcomeResolved(hist, final);
    expect(r.pass).toBe(false);
    expect(r.examples).toHaveLength(2);
  });
  it('is unknown when no cut landed', () => {
    expect(checkUnknownOutcomeResolved([h.fault(1, 'reset-after-commit', { point: 'claim', armed: true })], empty).pass).toBe('unknown');
  });
});

describe('no-charge-for-db-faults', () => {
  const bounds = { graceMs: 1_000, resumeMs: 2_000 };
  const readOnly = [h.fault(1_000, 'read-only', { seq: 1, forS: 3 }), h.fault(4_000, 'read-only', { seq: 1, phase: 'end' })];
  const detected: HistoryEvent = { t: 1_200, node: 'worker-0', type: 'db:error', workerId: 'worker-0.1', kind: 'read_only', sqlstate: '25006', where: 'claim', error: 'cannot execute UPDATE in a read-only transaction' };
  it('passes when nothing is charged, the fault is detected, and work resumes', () => {
    const hist = [...readOnly, detected, h.completed(4_100, 7, 'worker-0.1'), claim(4_200, 8, 'worker-0')];
    const r = checkNoChargeForDbFaults(hist, empty, bounds);
    expect(r.pass).toBe(true);
    expect(r.judged.n).toBe(1);
  });
  it('fails when a job is charged a failure for the database error, or the fault goes undetected', () => {
    const failed = { ...h.failed(4_200, 7, 'worker-0.1'), error: 'error: cannot execute INSERT in a read-only transaction' } as HistoryEvent;
    const r = checkNoChargeForDbFaults([...readOnly, failed, claim(4_300, 8, 'worker-0')], empty, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ charged: expect.objectContaining({ jobId: 7 }) }, { undetected: expect.objectContaining({ fault: 'read-only' }) }]);
  });
  it('is unknown with no database-host fault', () => {
    expect(checkNoChargeForDbFaults([h.completed(1, 7, 'worker-0.1')], empty, bounds).pass).toBe('unknown');
  });
});
