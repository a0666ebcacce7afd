import { describe, expect, it } from 'vitest';
import { checkArchiveOnce } from '../harness/checkers/archive-once.ts';
import { checkCancelHonoured } from '../harness/checkers/cancel-honoured.ts';
import { checkDeadLetterRows } from '../harness/checkers/dead-letter-rows.ts';
import { checkNoConcurrentClaim } from '../harness/checkers/no-concurrent-claim.ts';
import { checkOperatorAudited } from '../harness/checkers/operator-audited.ts';
import { checkRedriveReruns } from '../harness/checkers/redrive-reruns.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h, job } from './support/history-builder.ts';

const cancelledRunning = (t = 100) => h.operator(t, 'cancel', [1], { dbTime: 1_100, before: { 1: 'claimed' }, after: { 1: 'cancelled' } });
const cancelledEvent: HistoryEvent = { t: 150, node: 'w1', type: 'job:cancelled', jobId: 1, queue: 'default', attempt: 1, workerId: 'w1' };
const refusedDone = h.operator(120, 'cancel', [2], { outcome: 'refused', refusal: 'JobStateError', before: { 2: 'done' }, after: { 2: 'done' } });

describe('cancel-honoured', () => {
  it('passes when a cancelled running job is aborted and ends cancelled, and a done one is refused', () => {
    const history = [h.claim(10, 1, 'w1', 1, { dbTime: 1_000 }), cancelledRunning(), cancelledEvent, refusedDone];
    const r = checkCancelHonoured(history, finalState([job(1, 'cancelled'), job(2, 'done')]));
    expect(r.pass).toBe(true);
    expect(r.figure).toMatch(/^1 cancels accepted \(1 of running jobs, 1 handlers told at a heartbeat\), 1 cancels of done jobs refused; 0 broken/);
    expect(r.judged).toEqual({ n: 2, what: 'cancels issued' });
  });

  it('fails (negative control) when a cancelled running job completes anyway, as when cancel skips claimed rows', () => {
    const history = [h.claim(10, 1, 'w1', 1, { dbTime: 1_000 }), cancelledRunning(), h.completed(200, 1, 'w1')];
    const r = checkCancelHonoured(history, finalState([job(1, 'done')]));
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 1, cancelled: 'api', wasBefore: 'claimed', endedAs: 'done' }, { jobId: 1, completionAccepted: true }]);
  });

  it('fails for a claim after the cancel returned, and for an accepted cancel of a done job', () => {
    const late = [cancelledRunning(), h.claim(300, 1, 'w2', 2, { dbTime: 1_200 })];
    expect(checkCancelHonoured(late, finalState([job(1, 'cancelled')])).examples).toEqual([{ jobId: 1, claimedAfterCancelMs: 100 }]);
    const done = [h.operator(100, 'cancel', [2], { before: { 2: 'done' } })];
    expect(checkCancelHonoured(done, finalState([job(2, 'cancelled')])).pass).toBe(false);
  });

  it('is inconclusive when no cancel was accepted', () => {
    expect(checkCancelHonoured([refusedDone], finalState([job(2, 'done')])).pass).toBe('unknown');
    expect(checkCancelHonoured([], finalState([])).judged).toEqual({ n: 0, what: 'cancels issued' });
  });
});

const selection = { reasonContains: 'crashed', deadBefore: [{ jobId: 1, reason: 'crashed its worker 2 times' }, { jobId: 2, reason: 'attempts exhausted: boom' }] };
const redrive = (x: { moved?: number[]; after?: Record<string, string> } = {}) =>
  h.operator(100, 'redrive', x.moved ?? [1], { dbTime: 1_100, queue: 'default', before: { 1: 'dead', 2: 'dead' }, after: x.after ?? { 1: 'pending', 2: 'dead' }, selection });

describe('redrive-reruns', () => {
  it('passes when the selected dead job reruns from attempt 1 and dies again, and the other dead letter stays', () => {
    const history = [redrive(), h.claim(90, 1, 'w1', 1, { dbTime: 1_095, crashCount: 0 }), h.rescuedFrom(400, 1, 'w1', { attempts: 2, crashCount: 2, dead: true, dbTime: 3_000 })];
    const r = checkRedriveReruns(history, finalState([job(1, 'dead'), job(2, 'dead')]));
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 2, what: 'redriven or retried jobs and dead letters a redrive had to leave' });
  });

  it('fails (negative control) when the redrive kept the attempts, so the job reran at attempt 3', () => {
    const history = [redrive(), h.claim(200, 1, 'w1', 3, { dbTime: 1_200, crashCount: 0 })];
    const r = checkRedriveReruns(history, finalState([job(1, 'dead'), job(2, 'dead')]));
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 1, firstAttemptAfterRedrive: 3, crashCount: 0, seenAt: 'claim' }]);
  });

  it('fails when it moved a dead letter outside its selection, and when a job never ran again', () => {
    const wide = [redrive({ moved: [1, 2], after: { 1: 'pending', 2: 'pending' } }), h.claim(200, 1, 'w1', 1, { dbTime: 1_200 })];
    const r = checkRedriveReruns(wide, finalState([job(1, 'done'), job(2, 'pending')]));
    expect(r.examples).toEqual([
      { jobId: 2, notSelected: 'attempts exhausted: boom', after: 'pending' },
      { jobId: 2, outsideSelection: 'attempts exhausted: boom' },
      { jobId: 2, neverRanAgain: true },
    ]);
  });

  it('a retried failed job keeps its budget: its next claim is one above its last failure', () => {
    const retry = h.operator(100, 'retry', [5], { dbTime: 1_100, before: { 5: 'failed' }, after: { 5: 'pending' } });
    const ok = [h.failed(50, 5, 'w1', 2, { dbTime: 500 }), retry, h.claim(200, 5, 'w1', 3, { dbTime: 1_200 })];
    expect(checkRedriveReruns(ok, finalState([job(5, 'done')])).examples).toBeUndefined();
    const reset = [h.failed(50, 5, 'w1', 2, { dbTime: 500 }), retry, h.claim(200, 5, 'w1', 1, { dbTime: 1_200 })];
    expect(checkRedriveReruns(reset, finalState([job(5, 'done')])).examples).toEqual([{ jobId: 5, retriedFailedAttempt: 1, lastFailed: 2 }]);
  });

  it('is inconclusive when nothing dead was redriven', () => {
    expect(checkRedriveReruns([], finalState([])).pass).toBe('unknown');
  });
});

describe('operator-audited', () => {
  const row = (verb: string, jobId: number | null, reason: string, queue = 'default') => ({ verb, queue, jobId, actor: 'oncall-api', reason });
  const cancel = h.operator(100, 'cancel', [1], { reason: 'r1', before: { 1: 'claimed' }, after: { 1: 'cancelled' } });
  const refused = h.operator(110, 'cancel', [2], { reason: 'r2', outcome: 'refused', before: { 2: 'done' }, after: { 2: 'done' } });
  const bulk = h.operator(120, 'redrive', [3, 4], { reason: 'r3', queue: 'default', before: { 3: 'dead', 4: 'dead' }, after: { 3: 'pending', 4: 'pending' } });
  const pause = h.operator(130, 'pause', [], { reason: 'r4', queue: 'default', before: { default: 'running' }, after: { default: 'paused' } });

  it('passes with one row per change, none for a refusal', () => {
    const audit = [row('cancel', 1, 'r1'), row('redrive', 3, 'r3'), row('redrive', 4, 'r3'), row('pause', null, 'r4')];
    const r = checkOperatorAudited([cancel, refused, bulk, pause], finalState([], { audit }));
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('4 verb calls (1 refused), 4 audit rows matched; 0 wrong');
    expect(r.judged).toEqual({ n: 4, what: 'verb calls' });
  });

  it('fails (negative control) when a bulk redrive wrote no audit rows', () => {
    const r = checkOperatorAudited([cancel, bulk], finalState([], { audit: [row('cancel', 1, 'r1')] }));
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([
      { verb: 'redrive', via: 'api', jobId: 3, auditRows: 0 },
      { verb: 'redrive', via: 'api', jobId: 4, auditRows: 0 },
    ]);
  });

  it('fails when a refused verb wrote a row or changed its target, and for a row no verb explains', () => {
    const changed = h.operator(110, 'cancel', [2], { reason: 'r2', outcome: 'refused', before: { 2: 'claimed' }, after: { 2: 'cancelled' } });
    const r = checkOperatorAudited([changed], finalState([], { audit: [row('cancel', 2, 'r2'), row('cancel', 9, 'scenario fault cancel #9')] }));
    expect(r.examples).toEqual([
      { verb: 'cancel', refused: undefined, auditRows: 1 },
      { verb: 'cancel', jobId: 2, refusedButChanged: 'claimed -> cancelled' },
      { reason: 'scenario fault cancel #9', unmatchedRows: 1 },
    ]);
  });

  it('is inconclusive without the audit or without a verb', () => {
    expect(checkOperatorAudited([cancel], finalState([])).pass).toBe('unknown');
    expect(checkOperatorAudited([], finalState([], { audit: [] })).pass).toBe('unknown');
  });
});

describe('dead-letter-rows: a dead-letter by hand', () => {
  const byHand = h.operator(100, 'dead-letter', [1], { by: 'ana', reason: 'poison', before: { 1: 'claimed' }, after: { 1: 'dead' } });

  it("passes when the row carries the operator's reason, fails (negative control) when it does not", () => {
    const ok = checkDeadLetterRows([byHand], finalState([job(1, 'dead')], { deadLetters: [{ jobId: 1, reason: 'dead-lettered by ana: poison' }] }));
    expect(ok.pass).toBe(true);
    expect(ok.figure).toMatch(/1 dead-lettered by hand, 0 without the operator's reason$/);
    const bad = checkDeadLetterRows([byHand], finalState([job(1, 'dead')], { deadLetters: [{ jobId: 1, reason: 'attempts exhausted' }] }));
    expect(bad.pass).toBe(false);
    expect(bad.examples).toEqual([{ jobId: 1, deadLetteredByHand: 'dead-lettered by ana: poison', row: 'attempts exhausted' }]);
  });
});

describe('archive-once beside dead jobs', () => {
  it('counts the dead jobs left in place, and fails (negative control) for a dead job archived', () => {
    const done = job(1, 'done', { archived: true, finishedAtMs: 0, archivedAtMs: 5_000 });
    const ok = checkArchiveOnce([], finalState([done, job(2, 'dead')]), { archiveAfterMs: 2_000 });
    expect(ok.pass).toBe(true);
    expect(ok.judged).toEqual({ n: 2, what: 'archived jobs and dead or cancelled jobs it had to leave' });
    const bad = checkArchiveOnce([], finalState([done, job(2, 'dead', { archived: true, finishedAtMs: 0, archivedAtMs: 5_000 })]), { archiveAfterMs: 2_000 });
    expect(bad.pass).toBe(false);
    expect(bad.examples).toEqual([{ archivedNotDone: { jobId: 2, state: 'dead' } }]);
  });
});

describe('no-concurrent-claim across a redrive', () => {
  it('a redriven job claimed at attempt 1 again is a new life, even when the claim is recorded before the verb', () => {
    const history = [
      h.claim(10, 1, 'w1', 1, { dbTime: 100 }),
      h.rescuedFrom(20, 1, 'w1', { dead: true, dbTime: 3_000 }),
      h.claim(90, 1, 'w2', 1, { dbTime: 4_050 }),
      h.operator(100, 'redrive', [1], { dbTime: 4_100, dbBefore: 4_000, before: { 1: 'dead' }, after: { 1: 'claimed' } }),
    ];
    expect(checkNoConcurrentClaim(history, finalState([job(1, 'claimed')]), { leaseMs: 2_000 }).pass).toBe(true);
    // The same claims without the redrive are an attempt claimed twice.
    expect(checkNoConcurrentClaim(history.slice(0, 3), finalState([job(1, 'claimed')]), { leaseMs: 2_000 }).pass).toBe(false);
  });

  it('lets off a holder whose process died before the next claim', () => {
    const history = [h.claim(10, 1, 'w1', 1, { dbTime: 100 }), h.exited(20, 'w1'), h.claim(30, 1, 'w2', 2, { dbTime: 900 })];
    expect(checkNoConcurrentClaim(history, finalState([job(1, 'done')]), { leaseMs: 2_000 }).pass).toBe(true);
  });
});
