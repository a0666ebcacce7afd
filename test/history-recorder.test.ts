import { describe, expect, it } from 'vitest';
import { ManualClock } from '../engine/clock.ts';
import { HistoryRecorder } from '../harness/runner/recorder.ts';

describe('HistoryRecorder listeners', () => {
  const event = { type: 'fault:injected', node: 'nemesis', fault: 'worker-stop', detail: {} } as const;

  it('keeps delivering to every other watcher when one unsubscribes twice, or from inside its own callback', () => {
    const recorder = new HistoryRecorder(new ManualClock(0), 0);
    const seen: string[] = [];
    let offA = () => {};
    offA = recorder.onEvent(() => {
      seen.push('a');
      offA(); // a watcher that found its event stops watching, and its timeout path stops it again
      offA();
    });
    recorder.onEvent(() => seen.push('b'));
    recorder.onEvent(() => seen.push('c'));
    recorder.record(event);
    recorder.record(event);
    expect(seen).toEqual(['a', 'b', 'c', 'b', 'c']);
  });
});

describe('HistoryRecorder reports', () => {
  const claim = (jobId: number) => ({ type: 'job:claimed', node: 'worker-0', jobId, queue: 'q', priority: 0, attempt: 1, workerId: 'w', runAt: 0 }) as const;

  it('places a report where the host clock says it happened, however late it arrives, and equal times in arrival order', () => {
    const clock = new ManualClock(1_000);
    const recorder = new HistoryRecorder(clock, 1_000);
    clock.advance(20_000); // a harness 20 s behind on its IPC channels: every report below arrives late
    recorder.recordReported(claim(3), 1_000 + 9_000);
    recorder.recordReported(claim(1), 1_000 + 2_000);
    recorder.record(claim(4)); // arrival time: 20 s
    recorder.recordReported(claim(2), 1_000 + 9_000);
    recorder.recordReported(claim(5), 1_000 + 60_000); // "later than now" cannot be: clamped to arrival
    const order = recorder.events.map((e) => [e.t, (e as { jobId: number }).jobId]);
    expect(order).toEqual([[2_000, 1], [9_000, 3], [9_000, 2], [20_000, 4], [20_000, 5]]);
    // Sorted once; what arrives after stays in order.
    recorder.recordReported(claim(6), 1_000 + 15_000);
    expect(recorder.events.map((e) => (e as { jobId: number }).jobId)).toEqual([1, 3, 2, 6, 4, 5]);
  });
});
