// claim-ahead-paced on histories of a simulated worker draining a backlog: the engine's own sizing policy passes; one
// that jumps to 500 after a full claim fails (the claim-ahead-unpaced mutant's policy), as do a claim past the cap, a
// job of a grown buffer that waited past its first renewal, and a run that had to grow and did not.
import { describe, expect, it } from 'vitest';
import { AHEAD_CAP, claimAheadFor, HANDLER_MEAN_WEIGHT, type AheadInputs } from '../engine/worker/claim-ahead.ts';
import { checkClaimAheadPaced, type ClaimAheadPacedBounds } from '../harness/checkers/claim-ahead-paced.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h } from './support/history-builder.ts';

const final = finalState([]);
const bounds = (x: Partial<ClaimAheadPacedBounds> = {}): ClaimAheadPacedBounds => ({ concurrency: 2, paceSlack: 2, waitSlackMs: 1_000, mustGrow: false, ...x });

/**
 * One worker ('w1', heartbeats every `heartbeatMs`) with `concurrency` slots draining a backlog of `jobs` jobs of
 * `handlerMs` each, sized by `policy` as the engine's Worker does: a claim once the buffer is half spent, a claim
 * full while the backlog lasts, each job started in order as a slot frees. Time in ms steps; node time = t.
 */
function drain(o: { policy: (a: AheadInputs) => number; concurrency: number; handlerMs: number; jobs: number; heartbeatMs?: number }): HistoryEvent[] {
  const events: HistoryEvent[] = [h.settings(0, 'w1', { leaseMs: 30_000, heartbeatMs: o.heartbeatMs ?? 10_000 })];
  const running: { jobId: number; endsAt: number }[] = [];
  const waiting: { jobId: number; claimedAt: number }[] = [];
  let ahead = o.concurrency;
  let mean = Number.NaN;
  let longestWait = 0;
  let next = 1;
  const fillSlots = (t: number): void => {
    while (running.length < o.concurrency && waiting.length > 0) {
      const w = waiting.shift()!;
      longestWait = Math.max(longestWait, t - w.claimedAt);
      running.push({ jobId: w.jobId, endsAt: t + o.handlerMs });
      events.push(h.started(t, w.jobId, 'w1'));
    }
  };
  for (let t = 1; next <= o.jobs || waiting.length > 0 || running.length > 0; t++) {
    for (const r of running.filter((x) => x.endsAt <= t)) {
      running.splice(running.indexOf(r), 1);
      mean = Number.isNaN(mean) ? o.handlerMs : mean + (o.handlerMs - mean) * HANDLER_MEAN_WEIGHT;
      events.push(h.completed(t, r.jobId, 'w1', 1, o.handlerMs));
    }
    const free = o.concurrency + ahead - running.length - waiting.length;
    if (next <= o.jobs && free > 0 && waiting.length <= ahead / 2) {
      const n = Math.min(free, o.jobs - next + 1);
      ahead = o.policy({ base: o.concurrency, concurrency: o.concurrency, meanHandlerMs: mean, lastClaimFull: n === free, current: ahead, longestWaitMs: longestWait, maxWaitMs: (o.heartbeatMs ?? 10_000) / 2 });
      longestWait = 0;
      // As Worker.launch: each job reported claimed, then started at once if a slot is free.
      for (let k = 0; k < n; k++, next++) {
        events.push(h.claim(t, next, 'w1', 1, { dbTime: 1_000_000 + t, nodeTime: t, crashCount: 0 }));
        waiting.push({ jobId: next, claimedAt: t });
        fillSlots(t);
      }
    }
    fillSlots(t);
  }
  return events;
}

const unpaced = (a: AheadInputs): number => (a.lastClaimFull && !Number.isNaN(a.meanHandlerMs) ? AHEAD_CAP : a.base);

describe('claim-ahead-paced', () => {
  it('passes the engine\'s policy over a backlog of fast jobs, which grows the buffer', () => {
    const r = checkClaimAheadPaced(drain({ policy: claimAheadFor, concurrency: 2, handlerMs: 5, jobs: 300 }), final, bounds({ mustGrow: true }));
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 300, what: 'jobs claimed and started, each judged by its place in the buffer' });
    // 2 slots of 5 ms handlers run 40 jobs in 100 ms: the buffer grew well past its 2.
    expect(r.figure).toMatch(/the most behind (3\d|40)\b/);
  });

  it('passes slow handlers, whose buffer stays at concurrency', () => {
    const r = checkClaimAheadPaced(drain({ policy: claimAheadFor, concurrency: 2, handlerMs: 200, jobs: 40 }), final, bounds());
    expect(r.pass).toBe(true);
    expect(r.figure).toContain('0 waited behind 2 starts or more');
  });

  it('fails (negative control) a policy that jumps to 500 after a full claim, on pace and growth', () => {
    const r = checkClaimAheadPaced(drain({ policy: unpaced, concurrency: 2, handlerMs: 50, jobs: 300 }), final, bounds());
    expect(r.pass).toBe(false);
    expect(r.figure).toMatch(/breaches \(pace [\d,]+, growth [\d,]+\)/);
    expect(r.examples).toContainEqual(expect.objectContaining({ kind: 'pace', workerId: 'w1' }));
  });

  it("judges a claim's buffer by the mean the engine had when the claim before it returned", () => {
    // 1 ms handlers ended before claim 2 (the engine then sizes the next buffer at 2 x 2 x 100 / 1 = 400); a
    // 10 s handler ends before claim 3, whose 6 jobs wait in that buffer behind up to 5 starts: no breach,
    // though the mean at claim 3 itself would allow 2.
    const claim = (t: number, jobId: number) => h.claim(t, jobId, 'w1', 1, { dbTime: 1_000 + t, nodeTime: t, crashCount: 0 });
    const history: HistoryEvent[] = [
      h.settings(0, 'w1', { leaseMs: 30_000, heartbeatMs: 10_000 }),
      claim(10, 1), h.started(10, 1, 'w1'), claim(10, 2), h.started(10, 2, 'w1'),
      h.completed(11, 1, 'w1', 1, 1),
      claim(20, 3), h.started(20, 3, 'w1'), h.completed(21, 3, 'w1', 1, 1),
      h.completed(10_010, 2, 'w1', 1, 10_000),
      ...Array.from({ length: 6 }, (_, i) => claim(10_020, 4 + i)),
      ...Array.from({ length: 6 }, (_, i) => h.started(10_021 + i, 4 + i, 'w1')),
    ];
    const r = checkClaimAheadPaced(history, final, bounds());
    expect(r.pass).toBe(true);
    expect(r.figure).toContain('the most behind 5');
    // Negative control: the same claim 3 when claim 2's mean was already 10 s (the 10 s handler ended first).
    const slowFirst = history.map((e) => (e.type === 'job:completed' && e.jobId === 2 ? { ...e, t: 15 } : e)).sort((a, b) => a.t - b.t);
    const late = checkClaimAheadPaced(slowFirst.map((e) => (e.type === 'job:started' && e.jobId === 2 ? { ...e, nodeTime: -9_990 } : e)), final, bounds());
    expect(late.pass).toBe(false);
    expect(late.examples?.[0]).toMatchObject({ kind: 'pace', startsAhead: 2 });
  });

  it('fails a claim past concurrency + 500', () => {
    const r = checkClaimAheadPaced(drain({ policy: () => 600, concurrency: 2, handlerMs: 1, jobs: 2_000 }), final, bounds({ paceSlack: 100 }));
    expect(r.pass).toBe(false);
    // A buffer of 600 from the first claim breaks the pace too (no handler had ended: the pace is unknown, so the
    // default); the claims past 502 are counted as cap breaches.
    expect(r.figure).toMatch(/\bcap [1-9]/);
    expect(r.bound).toContain('claims <= 2 + 500');
  });

  it('fails a job of a grown buffer that started after its first renewal was due', () => {
    // 1 ms handlers and 40 ms heartbeats: a buffer of 500 makes the jobs at its end wait 250 ms.
    const r = checkClaimAheadPaced(drain({ policy: unpaced, concurrency: 2, handlerMs: 1, jobs: 800, heartbeatMs: 40 }), final, bounds({ paceSlack: 100, waitSlackMs: 10 }));
    expect(r.pass).toBe(false);
    expect((r.examples as { kind: string }[]).map((b) => b.kind)).toContain('first-renewal');
  });

  it('fails a run that must show the buffer grown when it never grew', () => {
    const r = checkClaimAheadPaced(drain({ policy: (a) => a.base, concurrency: 2, handlerMs: 5, jobs: 100 }), final, bounds({ mustGrow: true }));
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual(['no job waited behind 2 starts: the buffer never grew']);
  });

  it('is unknown with no claim, and leaves out a worker without heartbeats (no claim-ahead)', () => {
    expect(checkClaimAheadPaced([h.settings(0, 'w1')], final, bounds()).pass).toBe('unknown');
    const r = checkClaimAheadPaced(drain({ policy: unpaced, concurrency: 2, handlerMs: 50, jobs: 50, heartbeatMs: 0 }), final, bounds());
    expect(r.pass).toBe('unknown');
  });
});
