// killed-holder-charged on small hand-written histories, with violating ones.
import { describe, expect, it } from 'vitest';
import { checkKilledHolderCharged } from '../harness/checkers/killed-holder-charged.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h } from './support/history-builder.ts';

const final = finalState([]);
const bounds = { marginMs: 250 };
const started = (t: number, node: string, pid: number): HistoryEvent => ({ t, node, type: 'process:started', pid, role: 'worker' });
const stopped = (t: number, node: string, pid: number): HistoryEvent => ({ t, node, type: 'process:exited', pid, role: 'worker', code: 0, signal: null, expected: true });
/** Job 7 claimed at 1,000 by worker-0's first process (database clock = harness clock), its 2 s lease renewed once to end at 3,500. */
const held: HistoryEvent[] = [
  started(0, 'worker-0', 1),
  h.claim(1_000, 7, 'worker-0.1', 1, { node: 'worker-0', dbTime: 1_000, leaseExpiresAt: 3_000 }),
  h.renewed(1_500, 7, 'worker-0.1', 1, 1_500, 3_500),
];
/** The rescue of job 7 at 3,600, from the holder the database named, charged or not. */
const rescue = (crashed: boolean): HistoryEvent => ({ ...h.rescuedFrom(3_600, 7, 'worker-0.1'), crashed }) as HistoryEvent;

describe('killed-holder-charged', () => {
  it('passes a dead holder whose lease is charged a crash, and counts a rescue after the slot restarted', () => {
    const r = checkKilledHolderCharged([...held, h.exited(2_000, 'worker-0'), started(2_600, 'worker-0', 2), rescue(true)], final, bounds);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 1, what: 'leases of a dead holder taken back' });
    expect(r.figure).toContain('(1 of them after the slot');
  });

  it("fails (negative control) a dead holder's lease taken back as a lost lease, no crash charged, after its restart under the same id", () => {
    const r = checkKilledHolderCharged([...held, h.exited(2_000, 'worker-0'), started(2_600, 'worker-0', 2), rescue(false)], final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 7, holder: 'worker-0.1', diedAtT: 2_000, leaseEndedAtT: 3_500, rescuedAtT: 3_600, slotRestartedBeforeTheRescue: true }]);
  });

  it('judges no holder that was alive at its lease end, stopped cleanly, or died at the edge of its lease (it may have been seen alive after it)', () => {
    // Alive: a live holder that lost its lease is rightly not charged.
    expect(checkKilledHolderCharged([...held, rescue(false)], final, bounds).pass).toBe('unknown');
    // A clean stop (expected exit).
    expect(checkKilledHolderCharged([...held, stopped(2_000, 'worker-0', 1), rescue(false)], final, bounds).pass).toBe('unknown');
    // Killed 100 ms before its lease's end: within the margin.
    expect(checkKilledHolderCharged([...held, h.exited(3_400, 'worker-0'), rescue(false)], final, bounds).pass).toBe('unknown');
    // Killed after the rescue: not a dead holder's lease.
    expect(checkKilledHolderCharged([...held, rescue(false), h.exited(3_700, 'worker-0')], final, bounds).pass).toBe('unknown');
    expect(checkKilledHolderCharged([], final, bounds).pass).toBe('unknown');
  });

  it("takes an engine that does not say whether it charged (no `crashed`) as charging every expiry", () => {
    const r = checkKilledHolderCharged([...held, h.exited(2_000, 'worker-0'), h.rescuedFrom(3_600, 7, 'worker-0.1')], final, bounds);
    expect(r.pass).toBe(true);
  });
});
