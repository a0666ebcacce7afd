// dashboard-slo-mark and dashboard-page-timeout on small hand-written histories, with violating ones.
import { describe, expect, it } from 'vitest';
import { DASHBOARD } from '../engine/dashboard/server.ts';
import { checkDashboardPageTimeout, dashboardPageTimeout } from '../harness/checkers/dashboard-page-timeout.ts';
import { checkDashboardSloMark, dashboardSloMark } from '../harness/checkers/dashboard-slo-mark.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState } from './support/history-builder.ts';

const final = finalState([]);

/** The harness's own reading at `t`: each queue's oldest due, unclaimed job's age (ms). */
const sample = (t: number, ages: Record<string, number>): HistoryEvent =>
  ({ t, node: 'harness', type: 'sample', harness: { oldestUnclaimedAgeMs: ages } }) as unknown as HistoryEvent;

/** A read of the queues page sent at `sentAt`, answered 50 ms later, showing its own round: per queue [shown age, marked]. */
const read = (sentAt: number, rows: Record<string, [number, boolean]>, t = sentAt + 50): HistoryEvent => ({
  t,
  node: 'dashboard',
  type: 'dashboard:queues',
  sentAt,
  source: 'own',
  maxAgeMs: 10_000,
  queues: Object.fromEntries(Object.entries(rows).map(([q, [oldestMs, overSlo]]) => [q, { due: 1, estimated: false, oldestMs, overSlo }])),
});

describe('dashboard-slo-mark', () => {
  const bounds = dashboardSloMark.defaults;

  it("judges against the dashboard's declared default SLO", () => {
    expect(bounds.sloMs).toBe(DASHBOARD.options.sloMs.default);
    expect(bounds.sloMs).toBe(60_000);
  });

  it('passes a queue over the SLO marked and one under it unmarked, by the harness reading around the round', () => {
    const r = checkDashboardSloMark(
      [sample(9_000, { ops: 90_000, orders: 200 }), sample(10_000, { ops: 91_000, orders: 0 }), read(10_000, { ops: [91_000, true], orders: [0, false] })],
      final,
      bounds,
    );
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 2, what: 'queue rows of the queues page surely over or under the SLO' });
  });

  it('fails (negative control) a queue surely over the SLO that the page did not mark, or did not show', () => {
    const unmarked = checkDashboardSloMark([sample(10_000, { ops: 91_000, orders: 0 }), read(10_000, { ops: [91_000, false], orders: [0, false] })], final, bounds);
    expect(unmarked.pass).toBe(false);
    expect(unmarked.examples).toEqual([expect.objectContaining({ queue: 'ops', shown: '91,000 ms, not marked' })]);
    const missing = checkDashboardSloMark([sample(10_000, { ops: 91_000, orders: 0 }), read(10_000, { orders: [0, false] })], final, bounds);
    expect(missing.pass).toBe(false);
    expect(missing.examples).toEqual([expect.objectContaining({ queue: 'ops', shown: 'no row' })]);
  });

  it('fails (negative control) a queue surely under the SLO that the page marked over', () => {
    const r = checkDashboardSloMark([sample(10_000, { ops: 91_000, orders: 3_000 }), read(10_000, { ops: [91_000, true], orders: [3_000, true] })], final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([expect.objectContaining({ queue: 'orders', shown: '3,000 ms, marked over' })]);
  });

  it('does not judge a queue near the line, and is unknown when no queue was surely over (or none surely under)', () => {
    // 60.5 s: within the margin either way, whatever the page shows.
    const near = checkDashboardSloMark([sample(10_000, { ops: 60_500, orders: 0 }), read(10_000, { ops: [60_500, false], orders: [0, false] })], final, bounds);
    expect(near.pass).toBe('unknown');
    expect(near.judged?.n).toBe(1);
    expect(near.figure).toContain('no queue was surely over the SLO');
    const allUnder = checkDashboardSloMark([sample(10_000, { orders: 0 }), read(10_000, { orders: [0, false] })], final, bounds);
    expect(allUnder.pass).toBe('unknown');
    // A read with no harness sample near its round is not judged at all.
    expect(checkDashboardSloMark([sample(1_000, { ops: 91_000 }), read(10_000, { ops: [91_000, false] })], final, bounds).judged?.n).toBe(0);
  });

  it("takes a shared round's instant as its age before the read", () => {
    // The page showed a round taken 8 s before the read: the harness's reading near that instant is the truth.
    const shared: HistoryEvent = { ...(read(20_000, { ops: [50_000, false] }) as object), source: 'shared', roundNo: 3, leader: 'w', ageMs: 8_000 } as HistoryEvent;
    // At the round's instant (12 s) ops was 50 s old (under); by the read's send (20 s) a backlog dated further back had
    // landed (66 s, over). The page showed the round, unmarked: right for the round it showed.
    const r = checkDashboardSloMark([sample(12_000, { ops: 50_000 }), sample(20_000, { ops: 66_000 }), shared], final, bounds);
    expect(r.judged?.n).toBe(1);
    expect(r.pass).toBe('unknown');
  });
});

/** The lock-jobs-table fault's window, as the nemesis records it. */
const lock = (fromT: number, toT: number, seq = 3): HistoryEvent[] => [
  { t: fromT, node: 'nemesis', type: 'fault:injected', fault: 'lock-jobs-table', detail: { seq, forS: (toT - fromT) / 1000, mode: 'lock' } },
  { t: toT, node: 'nemesis', type: 'fault:injected', fault: 'lock-jobs-table', detail: { seq, phase: 'end' } },
];
const failed = (sentAt: number, t: number): HistoryEvent => ({ t, node: 'dashboard', type: 'dashboard:queues-failed', sentAt, status: 500, message: 'canceling statement due to statement timeout' });

describe('dashboard-page-timeout', () => {
  const bounds = dashboardPageTimeout.defaults;

  it("judges against the dashboard's declared default statement timeout", () => {
    expect(bounds.statementTimeoutMs).toBe(DASHBOARD.options.statementTimeoutMs.default);
    expect(bounds.statementTimeoutMs).toBe(5_000);
  });

  it('passes a page held by a 10 s lock that gave up at its timeout', () => {
    const r = checkDashboardPageTimeout([...lock(22_000, 32_000), failed(22_500, 27_560)], final, bounds);
    expect(r.pass).toBe(true);
    expect(r.judged?.n).toBe(1);
  });

  it('fails (negative control) a page held by the lock until it was released', () => {
    const r = checkDashboardPageTimeout([...lock(22_000, 32_000), read(22_500, {}, 32_040)], final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([expect.objectContaining({ tookMs: 9_540, answered: 'the page' })]);
  });

  it('does not judge a read the lock did not hold, one outside the lock, or one the lock did not outlast by the timeout', () => {
    const r = checkDashboardPageTimeout(
      [
        ...lock(22_000, 32_000),
        read(10_000, {}), // no lock
        read(22_100, {}), // answered the page at once: its queries did not reach the table
        failed(22_300, 22_310), // refused at once (not by the lock)
        failed(28_000, 32_020), // 4 s of lock left: under the timeout plus 2 s
      ],
      final,
      bounds,
    );
    expect(r.pass).toBe('unknown');
    expect(r.judged?.n).toBe(0);
    expect(r.figure).toContain('3 sent while the jobs table was locked');
  });
});
