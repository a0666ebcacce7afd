import { describe, expect, it } from 'vitest';
import { checkCronSkewRefusal } from '../harness/checkers/cron-skew-refusal.ts';
import { checkDeadLetterRows } from '../harness/checkers/dead-letter-rows.ts';
import { checkDeclaredAlerts } from '../harness/checkers/declared-alerts.ts';
import { checkDurableAcknowledgements } from '../harness/checkers/durable-acknowledgements.ts';
import { checkOldestAgeSlo } from '../harness/checkers/oldest-age-slo.ts';
import { checkSamplerAgrees } from '../harness/checkers/sampler-agrees.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h, job } from './support/history-builder.ts';

const crash = (t: number, seq = 0): HistoryEvent[] => [
  h.fault(t, 'db-restart', { seq, mode: 'crash', downMs: 1_000 }),
  h.fault(t + 1_500, 'db-restart', { seq, phase: 'end' }),
  h.evidence(t + 1_600, 'db-restart', { seq, postmasterPid: { before: 10, after: 11 }, probeDropped: true, crashRecovery: true }),
];

describe('durable-acknowledgements', () => {
  const before = [h.ok(100, 1, 1), h.ok(200, 2, 2), h.claim(300, 1, 'w1'), h.completed(400, 1, 'w1')];

  it('passes when what was acknowledged before the crash is still there after it', () => {
    const r = checkDurableAcknowledgements([...before, ...crash(1_000), h.claim(3_000, 2, 'w1'), h.completed(3_100, 2, 'w1')], finalState([job(1, 'done'), job(2, 'done')]));
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('crash at 1,000 ms, back at 2,500 ms: 2 of 2 acknowledged enqueues and 1 of 1 acknowledged completions and 1 of 1 acknowledged claims survived');
    // What came after the server was back (job 2's claim and completion) could not have been lost to the crash.
    expect(r.judged).toEqual({ n: 4, what: 'acknowledgements before the crash (enqueues, claims, completions)' });
  });

  it('fails (negative control) on an acknowledged enqueue whose row the crash lost', () => {
    const r = checkDurableAcknowledgements([...before, ...crash(1_000)], finalState([job(1, 'done')]));
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ lostEnqueue: { jobId: 2, ackedAtMs: 200 } }]);
  });

  it('fails (negative control) on an acknowledged completion undone: the job ran again after the crash', () => {
    const r = checkDurableAcknowledgements([...before, ...crash(1_000), h.claim(5_000, 1, 'w2', 2), h.completed(5_100, 1, 'w2', 2)], finalState([job(1, 'done'), job(2, 'done')]));
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ undoneCompletion: { jobId: 1, completedAtMs: 400, state: 'done', againAtMs: 5_000 } }]);
  });

  it('fails (negative control) on an acknowledged claim undone: the same attempt claimed again after the crash', () => {
    const r = checkDurableAcknowledgements([...before, h.claim(900, 2, 'w1', 1), ...crash(1_000), h.claim(5_000, 2, 'w2', 1), h.completed(5_100, 2, 'w2')], finalState([job(1, 'done'), job(2, 'done')]));
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ undoneClaim: { jobId: 2, attempt: 1, claimedAtMs: 900, againAtMs: 5_000 } }]);
    const deferredFirst: HistoryEvent = { t: 950, node: 'w1', type: 'job:deferred', jobId: 2, queue: 'default', attempt: 1, workerId: 'w1', reason: 'effect key busy', retryAt: 0 };
    const handedBack = checkDurableAcknowledgements([...before, h.claim(900, 2, 'w1', 1), deferredFirst, ...crash(1_000), h.claim(5_000, 2, 'w2', 1)], finalState([job(1, 'done'), job(2, 'done')]));
    expect(handedBack.pass).toBe(true);
  });

  it('fails (negative control) on a completion acknowledged after the kill, before the server was back, that did not survive', () => {
    const r = checkDurableAcknowledgements([...before, ...crash(1_000).slice(0, 1), h.completed(1_010, 2, 'w1'), ...crash(1_000).slice(1), h.claim(5_000, 2, 'w2', 1)], finalState([job(1, 'done'), job(2, 'done')]));
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ undoneCompletion: { jobId: 2, completedAtMs: 1_010, state: 'done', againAtMs: 5_000 } }]);
  });

  it('is unknown without a crash, or with one that showed no evidence (a fast restart is not a crash)', () => {
    expect(checkDurableAcknowledgements(before, finalState([job(1, 'done'), job(2, 'done')])).pass).toBe('unknown');
    const unshown = crash(1_000).slice(0, 2);
    expect(checkDurableAcknowledgements([...before, ...unshown], finalState([job(1, 'done'), job(2, 'done')])).pass).toBe('unknown');
    const fast = [h.fault(1_000, 'db-restart', { seq: 0, mode: 'fast' }), h.evidence(1_600, 'db-restart', { seq: 0 })];
    expect(checkDurableAcknowledgements([...before, ...fast], finalState([job(1, 'done')])).pass).toBe('unknown');
  });
});

describe('sampler-agrees', () => {
  const bounds = { toleranceMs: 2, estimateError: 0.5 };
  const agreeing = [0, 1, 2, 3, 4].map((i) => h.sample(i * 1_000, { q: 3_000 + i * 1_000 }, { engine: { q: { failed: 2, claimed: 5, overdue: 1 } }, harness: { q: { failed: 2, claimed: 5, overdue: 1 } }, done: 40 }));

  it('passes when every figure matches the harness reading of the same snapshot, the age within rounding', () => {
    const rounded = [h.sample(0, { q: 3_000.6 }, { ages: { q: 3_001 } }), ...agreeing];
    const r = checkSamplerAgrees(rounded, finalState([]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('6 of 6 samples agree; 241 rows read over them (pending, failed, claimed, done and dead letters); 0 queue figures estimated');
    expect(r.judged).toEqual({ n: 6, what: 'samples with both readings' });
  });

  it('fails (negative control) when the engine reads a queue as empty that has a job waiting 4 s', () => {
    const blind = [0, 1, 2].map((i) => h.sample(i * 1_000, {}, { ages: { q: 4_000 } }));
    const r = checkSamplerAgrees(blind, finalState([]), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples?.[0]).toEqual({ t: 0, queue: 'q', field: 'pending', engine: 0, harness: 1 });
  });

  it('fails (negative control) on one sample whose depth leaves out the failed rows, or whose age is 3 ms off', () => {
    const noFailed = [...agreeing, h.sample(5_000, { q: 10 }, { harness: { q: { failed: 3 } } })];
    expect(checkSamplerAgrees(noFailed, finalState([]), bounds)).toMatchObject({ pass: false, examples: [{ t: 5_000, queue: 'q', field: 'failed', engine: 0, harness: 3 }] });
    const age = [...agreeing, h.sample(5_000, { q: 10 }, { ages: { q: 13 } })];
    expect(checkSamplerAgrees(age, finalState([]), bounds)).toMatchObject({ pass: false, examples: [{ field: 'oldestMs', engine: 10, harness: 13 }] });
  });

  it('takes a capped count of a run recorded before estimates as a lower bound, and only that', () => {
    const capped = (engine: number) => [h.sample(0, { q: 1 }, { engine: { q: { pending: engine, capped: true } }, harness: { q: { pending: 150_000 } } })];
    expect(checkSamplerAgrees(capped(100_000), finalState([]), bounds).pass).toBe(true);
    expect(checkSamplerAgrees(capped(150_001), finalState([]), bounds).pass).toBe(false);
  });

  it('judges a figure marked estimated within estimateError of the true depth, and only then', () => {
    // True depth 100,000 (80,000 pending, 20,000 failed): 50 % of it is 50,000 either way.
    const est = (pending: number) => [h.sample(0, { q: 1 }, { engine: { q: { pending, failed: 20_000, estimated: true } }, harness: { q: { pending: 80_000, failed: 20_000 } } })];
    expect(checkSamplerAgrees(est(130_000), finalState([]), bounds).pass).toBe(true);
    expect(checkSamplerAgrees(est(30_000), finalState([]), bounds).pass).toBe(true);
    expect(checkSamplerAgrees(est(130_001), finalState([]), bounds)).toMatchObject({ pass: false, examples: [{ field: 'pending', engine: 130_001, harness: 80_000, estimated: true }] });
    // The same figure unmarked must be exact.
    const unmarked = [h.sample(0, { q: 1 }, { engine: { q: { pending: 80_001, failed: 20_000 } }, harness: { q: { pending: 80_000, failed: 20_000 } } })];
    expect(checkSamplerAgrees(unmarked, finalState([]), bounds).pass).toBe(false);
  });

  it('an estimated dead-letter count within the bound, but never 0 when there is one', () => {
    const dlq = (engine: number, own: number) => [h.sample(0, { q: 1 }, { engine: { q: { deadLetters: engine, deadLettersEstimated: true } }, harness: { q: { deadLetters: own } } })];
    expect(checkSamplerAgrees(dlq(1_200, 1_000), finalState([]), bounds).pass).toBe(true);
    expect(checkSamplerAgrees(dlq(1_600, 1_000), finalState([]), bounds).pass).toBe(false);
    expect(checkSamplerAgrees(dlq(0, 1), finalState([]), bounds)).toMatchObject({ pass: false, examples: [{ field: 'deadLetters', engine: 0, harness: 1 }] });
  });

  it('fails (negative control) on dead letters by queue or done rows the table does not hold', () => {
    const dlq = [h.sample(0, { q: 1 }, { engine: { q: { deadLetters: 3 } }, harness: { q: { deadLetters: 1 } } })];
    expect(checkSamplerAgrees(dlq, finalState([]), bounds)).toMatchObject({ pass: false, examples: [{ field: 'deadLetters', engine: 3, harness: 1 }] });
    const done = [h.sample(0, { q: 1 }, { engineDone: 7, done: 9 })];
    expect(checkSamplerAgrees(done, finalState([]), bounds)).toMatchObject({ pass: false, examples: [{ field: 'done', engine: 7, harness: 9 }] });
  });

  it('is unknown with no sample carrying both readings, or with no row to read', () => {
    const engineOnly = { ...h.sample(0, { q: 1 }), harness: undefined } as HistoryEvent;
    expect(checkSamplerAgrees([engineOnly], finalState([]), bounds).pass).toBe('unknown');
    expect(checkSamplerAgrees([h.sample(0, {}), h.sample(1_000, {})], finalState([]), bounds).pass).toBe('unknown');
  });
});

describe('oldest-age-slo judges the harness reading, not the engine sampler', () => {
  it('fails (negative control) when the engine says 0 but the harness sees the SLO broken', () => {
    const history = [0, 1, 2].map((i) => h.sample(i * 1_000, { q: 0 }, { ages: { q: 9_000 } }));
    const r = checkOldestAgeSlo(history, finalState([]), { sloMs: 2_000, incident: null, maxRecoverMs: 1_000, queues: [] });
    expect(r.pass).toBe(false);
  });
});

describe('declared-alerts', () => {
  const bounds = { mustFire: ['oldest-unclaimed-age', 'dead-letter-depth'], mustClear: ['oldest-unclaimed-age'] };

  it('passes when each declared alert fires and the one to clear clears', () => {
    const r = checkDeclaredAlerts([h.alert(1_000, 'oldest-unclaimed-age', 'up'), h.alert(1_500, 'dead-letter-depth', 'up'), h.alert(9_000, 'oldest-unclaimed-age', 'down')], finalState([]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('oldest-unclaimed-age fired at 1,000 ms, cleared; dead-letter-depth fired at 1,500 ms');
    expect(r.judged).toEqual({ n: 2, what: 'declared alert signals' });
  });

  it('fails (negative control) when one never fires, or fires and never clears', () => {
    expect(checkDeclaredAlerts([h.alert(1_000, 'oldest-unclaimed-age', 'up'), h.alert(9_000, 'oldest-unclaimed-age', 'down')], finalState([]), bounds).examples).toEqual(['dead-letter-depth: never fired']);
    const stuck = checkDeclaredAlerts([h.alert(1_000, 'oldest-unclaimed-age', 'up'), h.alert(1_500, 'dead-letter-depth', 'up')], finalState([]), bounds);
    expect(stuck.pass).toBe(false);
    expect(stuck.examples).toEqual(['oldest-unclaimed-age: fired at 1,000 ms, never cleared']);
  });

  it('is unknown when the scenario declares none', () => {
    expect(checkDeclaredAlerts([], finalState([]), { mustFire: [], mustClear: [] }).pass).toBe('unknown');
  });
});

describe('dead-letter-rows', () => {
  it('passes when every dead job has its row', () => {
    const r = checkDeadLetterRows([], finalState([job(1, 'dead'), job(2, 'done')], { deadLetters: [{ jobId: 1, reason: 'crash loop' }] }));
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 1, what: 'dead jobs and dead-letter rows' });
  });

  it('fails (negative control) on a dead job without a row, and on a row whose job is not dead', () => {
    const r = checkDeadLetterRows([], finalState([job(1, 'dead'), job(2, 'done')], { deadLetters: [{ jobId: 2, reason: 'x' }] }));
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ deadWithoutRow: 1 }, { rowForJobNotDead: 2 }]);
  });

  it('is unknown when nothing died', () => {
    expect(checkDeadLetterRows([], finalState([job(1, 'done')])).pass).toBe('unknown');
  });
});

describe('cron-skew-refusal', () => {
  const mat = (t: number, node: string): HistoryEvent => ({ t, node, type: 'cron:materialized', scheduleId: 's', occurrences: 1, inserted: 0, nodeId: node });
  const refused = (t: number, node: string): HistoryEvent => ({ t, node, type: 'cron:refused', nodeId: node, reason: 'clock skew', skewMs: -170_000 });
  const jump = (t: number, node: string) => h.fault(t, 'clock-jump', { seq: 1, target: node, jumpMs: -150_000 });
  const bounds = { mustRefuse: ['scheduler-0'] };

  it('passes when the pushed node refuses and writes nothing meanwhile, and no other node refuses', () => {
    const r = checkCronSkewRefusal([mat(500, 'scheduler-0'), mat(600, 'scheduler-1'), jump(1_000, 'scheduler-0'), refused(1_200, 'scheduler-0'), mat(1_300, 'scheduler-1'), refused(1_700, 'scheduler-0')], finalState([]), bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('2 refusals by scheduler-0; expected from scheduler-0');
    // scheduler-0 had to refuse; scheduler-1 reported and must not have.
    expect(r.judged).toEqual({ n: 2, what: 'scheduler nodes' });
  });

  it('fails (negative control) when the pushed node never refuses, or materializes while refusing', () => {
    expect(checkCronSkewRefusal([jump(1_000, 'scheduler-0'), mat(1_200, 'scheduler-0')], finalState([]), bounds).pass).toBe(false);
    const r = checkCronSkewRefusal([jump(1_000, 'scheduler-0'), refused(1_200, 'scheduler-0'), mat(1_700, 'scheduler-0')], finalState([]), bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ node: 'scheduler-0', problem: 'materialized 1x while refusing', firstAtMs: 1_700 }]);
  });

  it('fails (negative control) when a node within its tolerance refuses', () => {
    const r = checkCronSkewRefusal([mat(500, 'scheduler-1'), refused(700, 'scheduler-1')], finalState([]), { mustRefuse: [] });
    expect(r.pass).toBe(false);
  });

  it('is unknown when no scheduler reported and none must refuse, or the clock fault was skipped', () => {
    expect(checkCronSkewRefusal([], finalState([]), { mustRefuse: [] }).pass).toBe('unknown');
    const skipped = h.fault(1_000, 'clock-jump', { seq: 1, target: 'scheduler-0', skipped: 'no live process' });
    expect(checkCronSkewRefusal([skipped], finalState([]), bounds).pass).toBe('unknown');
  });
});
