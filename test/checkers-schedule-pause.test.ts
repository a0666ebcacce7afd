// schedule-paused-idle on small hand-written histories, with violating ones.
import { describe, expect, it } from 'vitest';
import { checkSchedulePausedIdle } from '../harness/checkers/schedule-paused-idle.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState } from './support/history-builder.ts';

const final = finalState([]);
const bounds = { inFlightMs: 1_000 };

const wrote = (t: number, scheduleId: string): HistoryEvent => ({ t, node: 'scheduler-0', type: 'cron:materialized', scheduleId, occurrences: 1, inserted: 1, nodeId: 'scheduler-0' });
const paused = (sentAt: number, t: number): HistoryEvent => ({ t, node: 'operator-dashboard', type: 'schedule:paused', scheduleId: 'digest', via: 'dashboard', sentAt });
const resumed = (sentAt: number, t: number): HistoryEvent => ({ t, node: 'operator-dashboard', type: 'schedule:resumed', scheduleId: 'digest', via: 'dashboard', sentAt });

describe('schedule-paused-idle', () => {
  it('passes a paused schedule written only after its resume while its twin was written during the pause', () => {
    const r = checkSchedulePausedIdle([wrote(500, 'digest'), paused(10_000, 10_100), wrote(10_600, 'digest'), wrote(13_000, 'twin'), resumed(18_000, 18_100), wrote(18_400, 'digest')], final, bounds);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 1, what: 'schedule pauses while occurrences came due' });
  });

  it('fails (negative control) an occurrence written while paused, and a schedule never written again after its resume', () => {
    const during = checkSchedulePausedIdle([paused(10_000, 10_100), wrote(13_000, 'twin'), wrote(13_010, 'digest'), resumed(18_000, 18_100), wrote(18_400, 'digest')], final, bounds);
    expect(during.pass).toBe(false);
    expect(during.examples).toEqual([{ schedule: 'digest', t: 13_010, inserted: 1, pausedAt: 10_100, by: 'scheduler-0' }]);
    const never = checkSchedulePausedIdle([paused(10_000, 10_100), wrote(13_000, 'twin'), resumed(18_000, 18_100)], final, bounds);
    expect(never.pass).toBe(false);
  });

  it('is unknown when nothing else was written during a pause', () => {
    expect(checkSchedulePausedIdle([paused(10_000, 10_100), resumed(18_000, 18_100), wrote(18_400, 'digest')], final, bounds).pass).toBe('unknown');
    expect(checkSchedulePausedIdle([], final, bounds).pass).toBe('unknown');
  });
});
