// rescue-off-honoured on small hand-written histories, with violating ones.
import { describe, expect, it } from 'vitest';
import { checkRescueOffHonoured } from '../harness/checkers/rescue-off-honoured.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState } from './support/history-builder.ts';

const final = finalState([]);

const started = (t: number, node: string, pid: number): HistoryEvent => ({ t, node, type: 'process:started', pid, role: 'worker' });
const exited = (t: number, node: string, pid: number): HistoryEvent => ({ t, node, type: 'process:exited', pid, role: 'worker', code: null, signal: 'SIGKILL', expected: false });
const settings = (t: number, node: string, rescue: boolean): HistoryEvent => ({ t, node, type: 'worker:settings', workerId: `${node}.0`, maxCrashes: 4, agingMs: 10_000, rescue, queues: {} });
const rescued = (t: number, node: string, jobId: number): HistoryEvent => ({ t, node, type: 'lease:rescued', jobId, queue: 'default', attempts: 1, crashCount: 0, dead: false, crashed: false });

describe('rescue-off-honoured', () => {
  it('passes when only the workers with their rescuer take back leases while a rescue-off worker lives', () => {
    const r = checkRescueOffHonoured(
      [started(0, 'worker-0', 1), settings(50, 'worker-0', true), started(0, 'worker-2', 3), settings(60, 'worker-2', false), rescued(4_000, 'worker-0', 7), rescued(4_100, 'worker-0', 8)],
      final,
    );
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 2, what: 'rescues while a worker with rescue: false lived' });
  });

  it('fails (negative control) a rescue-off worker that takes back a lease, even one reported before its settings', () => {
    const r = checkRescueOffHonoured([started(0, 'worker-2', 3), rescued(40, 'worker-2', 9), settings(60, 'worker-2', false), rescued(4_000, 'worker-0', 7)], final);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ workerId: 'worker-2.0', node: 'worker-2', jobId: 9, owner: null, t: 40 }]);
  });

  it('charges a rescue to the process that lived on its node then: a restarted worker with its rescuer on is not the rescue-off one', () => {
    const r = checkRescueOffHonoured(
      [started(0, 'worker-2', 3), settings(60, 'worker-2', false), rescued(1_000, 'worker-0', 5), exited(2_000, 'worker-2', 3), started(2_500, 'worker-2', 4), settings(2_600, 'worker-2', true), rescued(3_000, 'worker-2', 7)],
      final,
    );
    expect(r.pass).toBe(true);
    expect(r.judged?.n).toBe(1);
  });

  it('is unknown with no rescue-off worker, or none that lived through a rescue', () => {
    expect(checkRescueOffHonoured([started(0, 'worker-0', 1), settings(50, 'worker-0', true), rescued(4_000, 'worker-0', 7)], final).pass).toBe('unknown');
    expect(checkRescueOffHonoured([started(0, 'worker-2', 3), settings(60, 'worker-2', false), exited(1_000, 'worker-2', 3), rescued(4_000, 'worker-0', 7)], final).pass).toBe('unknown');
    expect(checkRescueOffHonoured([], final).pass).toBe('unknown');
  });
});
