// The scenario's live line: its rates are over load time, not over the set-up before the load began.
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { LoadGenerator } from '../harness/runner/generator.ts';
import { ProgressLine } from '../harness/runner/progress.ts';
import type { HistoryRecorder } from '../harness/runner/recorder.ts';
import type { RunSampler } from '../harness/runner/sampler.ts';

/** A line on a run whose set-up took `setupMs`, then `offered` jobs in the first second of load; returns what it printed. */
function firstLine(setupMs: number, offered: number, begin: boolean): string {
  let now = 0;
  const recorder = { now: () => now, onEvent: () => () => {} } as unknown as HistoryRecorder;
  const generator = { stats: { offered: 0, acknowledged: 0, unknown: 0, failed: 0, late: 0 } } as unknown as LoadGenerator;
  const sampler = { latest: undefined, oldestAgeSloMs: 2000, firing: [] } as unknown as RunSampler;
  const printed: string[] = [];
  const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (printed.push(String(chunk)), true));
  onTestFinished(() => write.mockRestore());
  const line = new ProgressLine(recorder, generator, sampler);
  now = setupMs;
  if (begin) line.begin();
  now += 1000;
  Object.assign(generator.stats, { offered, acknowledged: offered });
  line.update('load');
  return printed.join('');
}

describe('the live line', () => {
  it("reads a 500/s run's first second as 500/s, however long the set-up before it took", () => {
    expect(firstLine(9_400, 500, true)).toMatch(/offered\s+500\/s\s+achieved\s+500\/s/);
    // Negative control: a window that starts at the recorder's zero takes the set-up for load time.
    expect(firstLine(9_400, 500, false)).toMatch(/offered\s+48\/s/);
  });
});
