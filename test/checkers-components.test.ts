import { describe, expect, it } from 'vitest';
import { checkArchiveOnce } from '../harness/checkers/archive-once.ts';
import { checkHandBack } from '../harness/checkers/hand-back.ts';
import { checkIdempotentEnqueue } from '../harness/checkers/idempotent-enqueue.ts';
import { checkOutboxDelivery } from '../harness/checkers/outbox-delivery.ts';
import { checkPruneRetention } from '../harness/checkers/prune-retention.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h, job } from './support/history-builder.ts';

const received = (t: number, key: string, outcome: 'applied' | 'duplicate' | 'refused' | 'aborted', attempt = 1, writer = 'w1'): HistoryEvent => ({
  t, node: 'outbox-sink', type: 'outbox:received', key, attempt, relayId: 'relay-0.1', outcome, writer,
});
const effect = (key: string, jobId: number, appliedAtMs = 0) => ({ key, jobId, workerId: 'w1', appliedAtMs });
const retried = (t: number, key: string, firstJobId: number, retryJobId: number): HistoryEvent => ({ t, node: 'nemesis', type: 'enqueue:retried', key, firstJobId, retryJobId });
const cleanExit = (t: number, node: string): HistoryEvent => ({ t, node, type: 'process:exited', pid: 1, role: 'worker', code: 0, signal: null, expected: false });

describe('outbox-delivery', () => {
  const final = finalState([job(1, 'done', { kind: 'outbox' }), job(2, 'done', { kind: 'outbox' }), job(3, 'done', { kind: 'normal' })], {
    effectRows: [effect('op:1', 1), effect('op:2', 2)],
  });

  it('passes when every committed intent reached the sink, after refusals, cut-offs and absorbed duplicates', () => {
    const history = [received(10, 'intent:op:1', 'refused'), received(20, 'intent:op:1', 'applied', 2), received(11, 'intent:op:2', 'aborted'), received(30, 'intent:op:2', 'applied', 2), received(31, 'intent:op:2', 'duplicate', 3)];
    const r = checkOutboxDelivery(history, final, { kinds: ['outbox'] });
    expect(r.pass).toBe(true);
    expect(r.figure).toBe(
      '0 lost, 0 unexpected and 0 from an attempt that did not commit, of 2 committed intents; 5 requests, 2 refused or cut off and sent again, 1 duplicates absorbed by key; 0 effect transactions killed before commit',
    );
    expect(r.judged).toEqual({ n: 2, what: 'intent keys committed or received' });
  });

  it('fails (negative control) when a refused intent is never sent again, as a relay that marks rows delivered at claim does', () => {
    const history = [received(10, 'intent:op:1', 'refused'), received(11, 'intent:op:2', 'applied')];
    const r = checkOutboxDelivery(history, final, { kinds: ['outbox'] });
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ lost: 'intent:op:1' }]);
  });

  it("fails when the sink got an intent no committed effect recorded (a rolled-back attempt's)", () => {
    const history = [received(10, 'intent:op:1', 'applied'), received(11, 'intent:op:2', 'applied'), received(12, 'intent:op:9', 'applied')];
    const r = checkOutboxDelivery(history, final, { kinds: ['outbox'] });
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ unexpected: 'intent:op:9' }]);
  });

  it('fails when the intent applied was written by an attempt that rolled back (an intent recorded outside the effect transaction)', () => {
    const history = [h.evidence(5, 'worker-kill', { point: 'in-effect', jobId: 1 }), received(10, 'intent:op:1', 'applied', 1, 'w0'), received(11, 'intent:op:2', 'applied')];
    const r = checkOutboxDelivery(history, final, { kinds: ['outbox'] });
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ notTheCommittedAttempt: { key: 'intent:op:1', delivered: 'w0', committed: 'w1' } }]);
  });

  it('is inconclusive when no relay delivered anything, or no intent committed', () => {
    expect(checkOutboxDelivery([], final, { kinds: ['outbox'] }).pass).toBe('unknown');
    expect(checkOutboxDelivery([], finalState([job(1, 'done')]), { kinds: ['outbox'] }).pass).toBe('unknown');
  });
});

describe('archive-once', () => {
  const acked = [h.invoke(0, 1), h.ok(1, 1, 1), h.invoke(0, 2), h.ok(1, 2, 2)];

  it('passes when each job is in exactly one table and archived ones were old enough', () => {
    const final = finalState([job(2, 'done'), job(1, 'done', { archived: true, finishedAtMs: 1_000, archivedAtMs: 5_200 })]);
    const r = checkArchiveOnce(acked, final, { archiveAfterMs: 4_000 });
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('1 archived of 2 jobs (0 dead or cancelled left in place): 0 in both tables, 0 acknowledged in neither, 0 archived not done, 0 archived before 4,000 ms');
    expect(r.judged).toEqual({ n: 1, what: 'archived jobs and dead or cancelled jobs it had to leave' });
  });

  it('fails (negative control) when a row moved before the archiver\'s age, as a unit slip in its age test does', () => {
    const final = finalState([job(2, 'done'), job(1, 'done', { archived: true, finishedAtMs: 1_000, archivedAtMs: 1_400 })]);
    const r = checkArchiveOnce(acked, final, { archiveAfterMs: 4_000 });
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ tooYoung: { jobId: 1, archivedAfterMs: 400 } }]);
  });

  it('fails when a job is in both tables, in neither, or archived while not done', () => {
    const both = finalState([job(1, 'done'), job(2, 'done'), job(1, 'done', { archived: true, finishedAtMs: 0, archivedAtMs: 9_000 })]);
    expect(checkArchiveOnce(acked, both, { archiveAfterMs: 4_000 }).examples).toEqual([{ inBoth: 1 }]);
    const neither = finalState([job(2, 'done', { archived: true, finishedAtMs: 0, archivedAtMs: 9_000 })]);
    expect(checkArchiveOnce(acked, neither, { archiveAfterMs: 4_000 }).examples).toEqual([{ inNeither: { op: 1, jobId: 1 } }]);
    const dead = finalState([job(1, 'done'), job(2, 'dead', { archived: true, finishedAtMs: 0, archivedAtMs: 9_000 })]);
    expect(checkArchiveOnce(acked, dead, { archiveAfterMs: 4_000 }).pass).toBe(false);
  });

  it('is inconclusive when nothing was archived', () => {
    expect(checkArchiveOnce(acked, finalState([job(1, 'done'), job(2, 'done')]), { archiveAfterMs: 4_000 }).pass).toBe('unknown');
  });
});

describe('prune-retention', () => {
  const bounds = { retentionMs: 8_000, slackMs: 1_000 };
  const rows = [effect('op:1', 1, 1_000), effect('op:2', 2, 15_000)];

  it('passes when only keys past the retention are gone and young ones are kept', () => {
    const r = checkPruneRetention([], finalState([], { effectRows: rows, effectKeys: ['op:2'], dbNowMs: 20_000 }), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 pruned early of 1 pruned; 1 keys inside the retention kept, of 2 effects');
    // Only op:2, inside the retention, could have been pruned early; op:1 was old enough to go.
    expect(r.judged).toEqual({ n: 1, what: 'dedup keys inside the retention' });
  });

  it('fails (negative control) when a key inside the retention was pruned, as a pruner that misreads its retention does', () => {
    const r = checkPruneRetention([], finalState([], { effectRows: rows, effectKeys: [], dbNowMs: 20_000 }), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ key: 'op:2', ageMs: 5_000 }]);
  });

  it('is inconclusive when nothing was pruned, when nothing young was there to protect, or when the keys were not read', () => {
    expect(checkPruneRetention([], finalState([], { effectRows: rows, effectKeys: ['op:1', 'op:2'], dbNowMs: 20_000 }), bounds).pass).toBe('unknown');
    const allOld = checkPruneRetention([], finalState([], { effectRows: rows, effectKeys: [], dbNowMs: 90_000 }), bounds);
    expect(allOld.pass).toBe('unknown');
    expect(allOld.judged.n).toBe(0);
    expect(checkPruneRetention([], finalState([], { effectRows: rows }), bounds).pass).toBe('unknown');
  });
});

describe('hand-back', () => {
  const drained = [
    h.claim(10, 1, 'w1.1', 1, { node: 'w1', leaseExpiresAt: 5_000, runAt: 0 }),
    h.released(2_000, 1, 'w1.1', 1),
    cleanExit(2_010, 'w1'),
  ];

  it('passes when a handed-back job is claimed again with the same attempt, due at once', () => {
    const history = [...drained, h.claim(2_100, 1, 'w2.1', 1, { node: 'w2', runAt: 2_000 }), h.completed(2_200, 1, 'w2.1', 1)];
    const r = checkHandBack(history, finalState([]));
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('1 handed back by 1 drained workers: 0 charged, 0 not due until their lease ran out, 0 never rerun; 0 claims a drained worker left to the rescuer');
    expect(r.judged).toEqual({ n: 1, what: 'hand-backs' });
  });

  it('fails (negative control) when the hand-back kept the attempt it charged, as ReleaseJobs without the give-back does', () => {
    const history = [...drained, h.claim(2_100, 1, 'w2.1', 2, { node: 'w2', runAt: 2_000 })];
    const r = checkHandBack(history, finalState([]));
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ charged: { jobId: 1, releasedAttempt: 1, nextAttempt: 2 } }]);
  });

  it('fails when a released job waited its lease out, was never claimed again, or a drained worker left a claim to the rescuer', () => {
    const late = [...drained, h.claim(5_100, 1, 'w2.1', 1, { node: 'w2', runAt: 5_000 })];
    expect(checkHandBack(late, finalState([])).examples).toEqual([{ late: { jobId: 1, dueAt: 5_000, leaseEnd: 5_000 } }]);
    expect(checkHandBack(drained, finalState([])).examples).toEqual([{ neverRerun: { jobId: 1, attempt: 1 } }]);
    const leftBehind = [...drained, h.claim(2_100, 1, 'w2.1', 1, { node: 'w2', runAt: 2_000 }), h.claim(20, 2, 'w1.1', 1, { node: 'w1' }), h.rescuedFrom(6_000, 2, 'w1.1')];
    expect(checkHandBack(leftBehind, finalState([])).examples).toEqual([{ leftClaimed: { jobId: 2, owner: 'w1.1' } }]);
  });

  it("judges a hand-back whose next holder was killed before reporting its claim by that holder's rescue", () => {
    const rescuedAfter = (attempts: number) => [...drained, h.rescuedFrom(7_000, 1, 'w3.1', { attempts }), h.claim(9_000, 1, 'w2.1', attempts + 1, { node: 'w2', runAt: 7_000 })];
    const uncharged = checkHandBack(rescuedAfter(1), finalState([]));
    expect(uncharged.pass).toBe(true);
    expect(uncharged.figure).toContain('1 handed back (1 next claimed by a holder killed before it reported, judged by its rescue)');
    expect(checkHandBack(rescuedAfter(2), finalState([])).examples).toEqual([{ charged: { jobId: 1, releasedAttempt: 1, nextAttempt: 2 } }]);
  });

  it('is inconclusive when nothing was handed back', () => {
    expect(checkHandBack([h.claim(10, 1, 'w1', 1), h.completed(20, 1, 'w1', 1)], finalState([])).pass).toBe('unknown');
  });
});

describe('idempotent-enqueue', () => {
  it('passes when every re-send answered the first job and each key has one job', () => {
    const final = finalState([job(7, 'done', { producerKey: 'retry:0:0' }), job(8, 'done', { producerKey: 'retry:0:1', archived: true, finishedAtMs: 0, archivedAtMs: 1 })]);
    const r = checkIdempotentEnqueue([retried(10, 'retry:0:0', 7, 7), retried(11, 'retry:0:1', 8, 8)], final);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 re-sends answered with a second job, 0 keys without exactly one job, of 2 re-sent enqueues');
  });

  it('fails (negative control) when a re-send made a second job, as an enqueue that drops the key does', () => {
    const final = finalState([job(7, 'done', { producerKey: 'retry:0:0', idempotencyKey: null }), job(9, 'done', { producerKey: 'retry:0:0', idempotencyKey: null })]);
    const r = checkIdempotentEnqueue([retried(10, 'retry:0:0', 7, 9)], final);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ secondJob: { key: 'retry:0:0', firstJobId: 7, retryJobId: 9 } }, { jobsForKey: { key: 'retry:0:0', jobs: 2 } }]);
  });

  it('only counts a re-send made after the first job was archived: outside the idempotency window, a new job is the promise', () => {
    const final = finalState([job(7, 'done', { producerKey: 'retry:0:0', archived: true, finishedAtMs: 100, archivedAtMs: 5_000 }), job(9, 'done', { producerKey: 'retry:0:0' })]);
    const late: HistoryEvent = { t: 10, node: 'nemesis', type: 'enqueue:retried', key: 'retry:0:0', firstJobId: 7, retryJobId: 9, resentDbMs: 6_000 };
    const r = checkIdempotentEnqueue([late], final);
    expect(r.pass).toBe('unknown');
    expect(r.figure).toBe('0 re-sends answered with a second job, 0 keys without exactly one job, of 0 re-sent enqueues; 1 re-sent after their job was archived (outside the window)');
    expect(r.judged).toEqual({ n: 0, what: 're-sent enqueues inside the idempotency window' });
    expect(checkIdempotentEnqueue([{ ...late, resentDbMs: 4_000 }], final).pass).toBe(false);
  });

  it('is inconclusive when no enqueue was re-sent', () => {
    expect(checkIdempotentEnqueue([], finalState([job(1, 'done')])).pass).toBe('unknown');
  });
});
