// one-round-per-interval on small hand-written histories, with a violating one.
import { describe, expect, it } from 'vitest';
import { checkOneRoundPerInterval } from '../harness/checkers/one-round-per-interval.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState } from './support/history-builder.ts';

const final = finalState([]);
const bounds = { intervalMs: 5_000, exitSlackMs: 2_000, minHandovers: 1 };

/** Round `roundNo` written at `t` by worker `leader` (`worker-<slot>.<gen>`), as the runner reads it back. */
const round = (t: number, roundNo: number, leader: string): HistoryEvent => ({ t, node: leader.replace(/\.\d+$/, ''), type: 'sampler:round', roundNo, leader });
const exited = (t: number, node: string): HistoryEvent => ({ t, node, type: 'process:exited', pid: 1, role: 'worker', code: null, signal: 'SIGKILL', expected: false });

describe('one-round-per-interval', () => {
  it('passes one leader a round an interval, and a handover right after the leader died', () => {
    const r = checkOneRoundPerInterval(
      [round(0, 1, 'worker-0.1'), round(5_100, 2, 'worker-0.1'), exited(6_000, 'worker-0'), round(6_200, 3, 'worker-2.1'), round(11_300, 4, 'worker-2.1')],
      final,
      bounds,
    );
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 3, what: "intervals between the elected sampler's rounds" });
  });

  it('passes a handover an interval after the last round (a leader that resigned after a failed round), and an exit recorded late', () => {
    expect(checkOneRoundPerInterval([round(0, 1, 'worker-0.1'), round(5_000, 2, 'worker-1.1')], final, bounds).pass).toBe(true);
    expect(checkOneRoundPerInterval([round(0, 1, 'worker-0.1'), round(1_000, 2, 'worker-1.1'), exited(2_500, 'worker-0')], final, bounds).pass).toBe(true);
  });

  it('fails (negative control) two workers sampling within one interval while both live', () => {
    const r = checkOneRoundPerInterval(
      [round(0, 1, 'worker-0.1'), round(300, 2, 'worker-1.1'), round(600, 3, 'worker-2.1'), round(5_000, 4, 'worker-0.1'), exited(9_000, 'worker-0')],
      final,
      bounds,
    );
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([
      { roundNo: 2, leader: 'worker-1.1', previous: 'worker-0.1', gapMs: 300, t: 300 },
      { roundNo: 3, leader: 'worker-2.1', previous: 'worker-1.1', gapMs: 300, t: 600 },
      { roundNo: 4, leader: 'worker-0.1', previous: 'worker-2.1', gapMs: 4_400, t: 5_000 },
    ]);
  });

  it('is unknown with no round, or when the election never moved', () => {
    expect(checkOneRoundPerInterval([], final, bounds).pass).toBe('unknown');
    expect(checkOneRoundPerInterval([round(0, 1, 'worker-0.1'), round(5_000, 2, 'worker-0.1')], final, bounds).pass).toBe('unknown');
  });
});
