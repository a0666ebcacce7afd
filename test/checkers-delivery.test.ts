import { describe, expect, it } from 'vitest';
import { checkExactlyOneEffect } from '../harness/checkers/exactly-one-effect.ts';
import { checkNoConcurrentClaim } from '../harness/checkers/no-concurrent-claim.ts';
import { checkNoJobLost } from '../harness/checkers/no-job-lost.ts';
import { checkNoStaleCompletion } from '../harness/checkers/no-stale-completion.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h, job } from './support/history-builder.ts';

// Convention of these histories: op n became job n, keyed op:n.
describe('no-job-lost', () => {
  const acked = [h.invoke(0, 1), h.ok(1, 1, 1), h.invoke(2, 2), h.ok(3, 2, 2), h.invoke(4, 3), h.info(5, 3), h.invoke(6, 4), h.info(7, 4)];

  it('passes when every acknowledged job is done or dead, and counts unknown-outcome enqueues that turned up', () => {
    // op 3's ack was lost but the row exists (recovered); op 4's row never committed: allowed.
    const r = checkNoJobLost(acked, finalState([job(1, 'done'), job(2, 'dead'), job(3, 'done')]), { maxLost: 0 });
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 missing and 0 unfinished of 2 acknowledged; 1 of 2 unknown-outcome enqueues recovered; 0 unexpected');
    expect(r.bound).toBe('0 lost, 0 unexpected');
    // The 2 acknowledged and the 1 recovered could each have been lost; op 4, absent, could not.
    expect(r.judged).toEqual({ n: 3, what: 'acknowledged or recovered enqueues' });
  });

  it('fails (negative control) when an acknowledged job is missing from the final state', () => {
    const r = checkNoJobLost(acked, finalState([job(1, 'done')]), { maxLost: 0 });
    expect(r.pass).toBe(false);
    expect(r.figure).toMatch(/^1 missing and 0 unfinished of 2 acknowledged/);
    expect(r.examples).toContainEqual({ lost: 'missing', op: 2 });
  });

  it('fails (negative control) when two acknowledged ops came back as one job: the later was collapsed onto the other and never runs', () => {
    // op 2 was acknowledged with op 1's job (its key collapsed onto op 1's); job 1 is done, op 2's work never happened.
    const history = [h.invoke(0, 1), h.ok(1, 1, 1), h.invoke(2, 2), h.ok(3, 2, 1)];
    const r = checkNoJobLost(history, finalState([job(1, 'done')]), { maxLost: 0 });
    expect(r.pass).toBe(false);
    expect(r.figure).toMatch(/^1 missing and 0 unfinished of 2 acknowledged/);
    expect(r.examples).toContainEqual({ lost: 'missing', op: 2 });
  });

  it('fails when a row exists for an enqueue the database refused, or for an op never invoked', () => {
    const history = [h.invoke(0, 1), h.ok(1, 1, 1), h.invoke(2, 2), h.fail(3, 2)];
    const r = checkNoJobLost(history, finalState([job(1, 'done'), job(2, 'done'), job(9, 'done')]), { maxLost: 0 });
    expect(r.pass).toBe(false);
    expect(r.figure).toMatch(/2 unexpected$/);
    expect(r.examples).toEqual(
      expect.arrayContaining([
        { unexpected: 'enqueue:fail, yet the row exists', op: 2, jobId: 2 },
        { unexpected: 'no enqueue:invoke for this op', op: 9, jobId: 9 },
      ]),
    );
  });

  it('is unknown, not green, when acknowledged or recovered jobs are still unfinished (the run did not drain)', () => {
    const r = checkNoJobLost(acked, finalState([job(1, 'done'), job(2, 'pending'), job(3, 'claimed')]), { maxLost: 0 });
    expect(r.pass).toBe('unknown');
    expect(r.figure).toMatch(/0 missing and 2 unfinished/);
  });

  it('treats an invoke with no recorded outcome as unknown-outcome: it may be absent, and if present it must finish', () => {
    const history = [h.invoke(0, 1), h.ok(1, 1, 1), h.invoke(2, 2)];
    expect(checkNoJobLost(history, finalState([job(1, 'done')]), { maxLost: 0 }).pass).toBe(true);
    const r = checkNoJobLost(history, finalState([job(1, 'done'), job(2, 'done')]), { maxLost: 0 });
    expect(r.pass).toBe(true);
    expect(r.figure).toMatch(/1 of 1 unknown-outcome enqueues recovered/);
    expect(checkNoJobLost(history, finalState([job(1, 'done'), job(2, 'pending')]), { maxLost: 0 }).pass).toBe('unknown');
  });

  it('is unknown when nothing was enqueued', () => {
    expect(checkNoJobLost([], finalState([]), { maxLost: 0 }).pass).toBe('unknown');
  });
});

describe('exactly-one-effect', () => {
  const history = [h.invoke(0, 1, 'effect'), h.ok(1, 1, 1), h.invoke(2, 2, 'effect'), h.ok(3, 2, 2), h.invoke(4, 3, 'normal'), h.ok(5, 3, 3)];

  it('passes when each done effect job applied its effect once', () => {
    const r = checkExactlyOneEffect(history, finalState([job(1, 'done'), job(2, 'done'), job(3, 'done')], { effects: { 'op:1': 1, 'op:2': 1 } }), { kinds: ['effect'] });
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 duplicated and 0 missing effects over 2 effect jobs (2 effect keys)');
    expect(r.judged).toEqual({ n: 2, what: 'effect keys applied or owed by a done effect job' });
  });

  it('judges a key applied and a key a done effect job owes; an effect job not done owes none', () => {
    const r = checkExactlyOneEffect(history, finalState([job(1, 'pending'), job(2, 'done'), job(3, 'done')], { effects: { 'op:3': 1 } }), { kinds: ['effect'] });
    // op:3 applied (a normal job's, still judged for duplicates), op:2 owed and missing; op:1 is not done: it may have 0 or 1.
    expect(r.judged.n).toBe(2);
    const nothingOwed = checkExactlyOneEffect(history, finalState([job(1, 'pending'), job(2, 'failed')]), { kinds: ['effect'] });
    expect(nothingOwed.judged.n).toBe(0);
  });

  it('fails (negative control) on a duplicate effect, and on a done job whose effect never happened', () => {
    const r = checkExactlyOneEffect(history, finalState([job(1, 'done'), job(2, 'done'), job(3, 'done')], { effects: { 'op:1': 2 } }), { kinds: ['effect'] });
    expect(r.pass).toBe(false);
    expect(r.figure).toBe('1 duplicated and 1 missing effects over 2 effect jobs (1 effect keys)');
    expect(r.examples).toEqual([{ duplicate: 'op:1', count: 2 }, { missing: 'op:2', jobId: 2 }]);
  });

  it('lets a dead effect job have no effect, and counts duplicates of any key whatever its kind', () => {
    const ok = checkExactlyOneEffect(history, finalState([job(1, 'dead'), job(2, 'done')], { effects: { 'op:2': 1 } }), { kinds: ['effect'] });
    expect(ok.pass).toBe(true);
    const dup = checkExactlyOneEffect(history, finalState([job(3, 'done')], { effects: { 'op:3': 3 } }), { kinds: ['effect'] });
    expect(dup.pass).toBe(false);
  });
});

describe('no-concurrent-claim', () => {
  it('passes when holds of a job follow one another (fail, then retry elsewhere; rescue, then reclaim)', () => {
    const history = [
      h.claim(10, 1, 'w1', 1), h.failed(20, 1, 'w1', 1), h.claim(30, 1, 'w2', 2), h.completed(40, 1, 'w2', 2),
      h.claim(10, 2, 'w1', 1), h.rescued(50, 2), h.claim(60, 2, 'w2', 2), h.completed(70, 2, 'w2', 2),
    ];
    const r = checkNoConcurrentClaim(history, finalState([]), { leaseMs: 0 });
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 attempts claimed twice and 0 overlapping holds over 4 claims');
    expect(r.judged).toEqual({ n: 4, what: 'claims' });
  });

  it("passes when a worker's failure report arrives after the retry's claim (a busy worker reports late)", () => {
    const history = [h.claim(10, 1, 'w1', 1), h.claim(30, 1, 'w2', 2), h.failed(31, 1, 'w1', 1), h.completed(40, 1, 'w2', 2)];
    expect(checkNoConcurrentClaim(history, finalState([]), { leaseMs: 30_000 }).pass).toBe(true);
  });

  it('fails (negative control) when two workers hold a job at once, as claims without SKIP LOCKED do', () => {
    const history = [h.claim(10, 1, 'w1', 1), h.claim(11, 1, 'w2', 2), h.completed(20, 1, 'w1', 1), h.completed(21, 1, 'w2', 2)];
    const r = checkNoConcurrentClaim(history, finalState([]), { leaseMs: 30_000 });
    expect(r.pass).toBe(false);
    expect(r.figure).toBe('0 attempts claimed twice and 1 overlapping holds over 2 claims');
    expect(r.examples).toEqual([{ jobId: 1, held: { workerId: 'w1', attempt: 1, t: 10 }, claimed: { workerId: 'w2', attempt: 2, t: 11 } }]);
  });

  it('passes when a claim handed back uncharged (job:deferred) is taken again, with the same attempt, by another worker', () => {
    const deferred = { t: 12, node: 'worker-0', type: 'job:deferred' as const, jobId: 1, queue: 'q', attempt: 1, workerId: 'w1', reason: 'effect held by another holder', retryAt: 400 };
    const history = [h.claim(10, 1, 'w1', 1), deferred, h.claim(13, 1, 'w2', 1), h.completed(20, 1, 'w2', 1)];
    expect(checkNoConcurrentClaim(history, finalState([]), { leaseMs: 30_000 }).pass).toBe(true);
  });

  it("passes when a worker handed its claim back at shutdown (lease:released) and another takes the same attempt, even if the release's report arrives after that claim", () => {
    const inOrder = [h.claim(10, 1, 'w1', 1), h.released(12, 1, 'w1', 1), h.claim(13, 1, 'w2', 1), h.completed(20, 1, 'w2', 1)];
    expect(checkNoConcurrentClaim(inOrder, finalState([]), { leaseMs: 30_000 }).pass).toBe(true);
    const reportedLate = [h.claim(10, 1, 'w1', 1), h.claim(13, 1, 'w2', 1), h.released(14, 1, 'w1', 1), h.completed(20, 1, 'w2', 1)];
    const r = checkNoConcurrentClaim(reportedLate, finalState([]), { leaseMs: 30_000 });
    expect(r.figure).toBe('0 attempts claimed twice and 0 overlapping holds over 2 claims');
    expect(r.pass).toBe(true);
  });

  it('fails when the same attempt is claimed by two workers', () => {
    const history = [h.claim(10, 1, 'w1', 1), h.completed(12, 1, 'w1', 1), h.claim(13, 1, 'w2', 1)];
    const r = checkNoConcurrentClaim(history, finalState([]), { leaseMs: 0 });
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 1, attempt: 1, workers: ['w1', 'w2'] }]);
  });

  it('allows a takeover once the lease could have expired, measured on the database clock', () => {
    const history = [h.claim(10, 1, 'w1', 1, { dbTime: 1_000 }), h.claim(11, 1, 'w2', 2, { dbTime: 31_000 })];
    expect(checkNoConcurrentClaim(history, finalState([]), { leaseMs: 30_000 }).pass).toBe(true);
    expect(checkNoConcurrentClaim(history, finalState([]), { leaseMs: 40_000 }).pass).toBe(false);
  });
});

describe('no-stale-completion', () => {
  it('passes when the only completion is the current owner', () => {
    const history = [h.claim(10, 1, 'w1', 1), h.leaseLost(40, 1, 'w1', 1), h.claim(41, 1, 'w2', 2), h.completed(50, 1, 'w2', 2)];
    const r = checkNoStaleCompletion(history, finalState([]), {});
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('0 completions accepted after the lease was taken over, of 1');
    expect(r.judged).toEqual({ n: 1, what: 'completions' });
  });

  it('fails (negative control) when the old owner completes after another worker claimed the job, as without fencing', () => {
    const history = [h.claim(10, 1, 'w1', 1), h.rescued(40, 1), h.claim(41, 1, 'w2', 2), h.completed(45, 1, 'w1', 1), h.completed(50, 1, 'w2', 2)];
    const r = checkNoStaleCompletion(history, finalState([]), {});
    expect(r.pass).toBe(false);
    expect(r.figure).toBe('1 completions accepted after the lease was taken over, of 2');
    expect(r.examples).toEqual([{ jobId: 1, completedBy: 'w1', attempt: 1, takenOverBy: 'w2', takeoverAttempt: 2 }]);
  });

  it('tells two holds of the same worker and attempt apart by their lease tokens (a claim a failover lost, made again)', () => {
    // w1's first claim (token a) was lost with the primary; w1 claimed attempt 1 again (token b) on the promoted one,
    // and the first hold's lost lease was reported after that: the completion is the second hold's, not stale.
    const history = [h.token(h.claim(10, 1, 'w1'), 'a'), h.token(h.claim(40, 1, 'w1'), 'b'), h.token(h.leaseLost(45, 1, 'w1', 1, 'complete'), 'a'), h.token(h.completed(50, 1, 'w1'), 'b')];
    const r = checkNoStaleCompletion(history, finalState([]), {});
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 1, what: 'completions' });
    // Without tokens the lost lease would read as the second hold's.
    const untokened = history.map(({ leaseToken: _t, ...e }: any) => e as HistoryEvent);
    expect(checkNoStaleCompletion(untokened, finalState([]), {}).pass).toBe(false);
  });

  it('fails (negative control) when the first hold of the same worker and attempt completes after the second claim', () => {
    const history = [h.token(h.claim(10, 1, 'w1'), 'a'), h.token(h.claim(40, 1, 'w1'), 'b'), h.token(h.completed(50, 1, 'w1'), 'a')];
    const r = checkNoStaleCompletion(history, finalState([]), {});
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 1, completedBy: 'w1', attempt: 1, takenOverBy: 'w1', takeoverAttempt: 1 }]);
  });

  it('fails when a completion is accepted after its own worker reported the lease lost', () => {
    const history = [h.claim(10, 1, 'w1', 1), h.leaseLost(20, 1, 'w1', 1), h.completed(30, 1, 'w1', 1)];
    const r = checkNoStaleCompletion(history, finalState([]), {});
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 1, completedBy: 'w1', attempt: 1, afterLeaseLost: true }]);
  });

  it('is unknown with no completions at all', () => {
    expect(checkNoStaleCompletion([h.claim(1, 1, 'w1')], finalState([]), {}).pass).toBe('unknown');
  });

  it('does not count a completion with no recorded claim as judged: it cannot be placed against a takeover', () => {
    const r = checkNoStaleCompletion([h.claim(1, 1, 'w1'), h.completed(2, 1, 'w1'), h.completed(3, 2, 'w2')], finalState([]), {});
    expect(r.figure).toBe('0 completions accepted after the lease was taken over, of 2 (1 with no recorded claim)');
    expect(r.judged.n).toBe(1);
  });
});
