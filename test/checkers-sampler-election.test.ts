// one-round-per-interval and dashboard-shows-fresh-round on small hand-written histories, with violating ones.
import { describe, expect, it } from 'vitest';
import { checkOneRoundPerInterval } from '../harness/checkers/one-round-per-interval.ts';
import { checkDashboardFreshRound } from '../harness/checkers/dashboard-shows-fresh-round.ts';
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

/** A read of the queues page sent at `sentAt`, answered at `t`: the shared round `roundNo`, or its own (null). */
const read = (sentAt: number, t: number, roundNo: number | null): HistoryEvent => ({
  t,
  node: 'dashboard',
  type: 'dashboard:queues',
  sentAt,
  maxAgeMs: 10_000,
  queues: {},
  ...(roundNo === null ? { source: 'own' as const } : { source: 'shared' as const, roundNo, leader: 'worker-0.1', ageMs: 0 }),
});

describe('dashboard-shows-fresh-round', () => {
  const margin = { marginMs: 1_000 };
  it('passes its own round before any round and once the last one went stale, and the latest fresh round otherwise', () => {
    const r = checkDashboardFreshRound(
      [read(0, 50, null), round(1_000, 1, 'worker-0.1'), read(3_000, 3_050, 1), round(6_000, 2, 'worker-0.1'), read(8_000, 8_100, 2), read(20_000, 20_050, null)],
      final,
      margin,
    );
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 4, what: "reads of the queues page beside the elected sampler's rounds" });
  });

  it('fails (negative control) its own round while one was fresh, a stale round, one replaced, and one nobody wrote', () => {
    const history = [round(1_000, 1, 'worker-0.1'), round(6_000, 2, 'worker-0.1'), read(3_000, 3_050, null), read(20_000, 20_050, 2), read(9_000, 9_050, 1), read(9_000, 9_050, 7)];
    const r = checkDashboardFreshRound(history, final, margin);
    expect(r.pass).toBe(false);
    expect(r.examples?.map((e) => (e as { why: string }).why)).toEqual([
      'round 1 by worker-0.1 was 2,050 ms old at the answer (fresh under 10,000 ms)',
      'written 14,000 ms before the read: stale (over 10,000 ms)',
      'round 2 had replaced it before the read',
      'no sampler wrote that round',
    ]);
  });

  it('is unknown with no round, no read, or no read that found a fresh round', () => {
    expect(checkDashboardFreshRound([read(0, 50, null)], final, margin).pass).toBe('unknown');
    expect(checkDashboardFreshRound([round(0, 1, 'worker-0.1')], final, margin).pass).toBe('unknown');
    expect(checkDashboardFreshRound([round(0, 1, 'worker-0.1'), read(20_000, 20_050, null)], final, margin).pass).toBe('unknown');
  });
});
