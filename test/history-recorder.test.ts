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
