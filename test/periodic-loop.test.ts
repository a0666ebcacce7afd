import { describe, expect, it } from 'vitest';
import { ManualClock } from '../engine/clock.ts';
import { createLogger } from '../engine/log.ts';
import { PeriodicLoop } from '../engine/periodic.ts';

const log = createLogger('test', 'silent');

/** Lets queued promise callbacks run, so the loop reaches its next sleep. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('PeriodicLoop (time is the subject: a manual clock, no real waiting)', () => {
  it('runs a pass, then pauses intervalMs of the clock before the next', async () => {
    const clock = new ManualClock(0);
    const passes: number[] = [];
    const loop = new PeriodicLoop({ clock, log, what: 'pass', intervalMs: 1000, runOnce: async () => void passes.push(clock.now()) });
    loop.start();
    loop.start(); // idempotent
    await settle();
    expect(passes).toEqual([0]);
    clock.advance(999);
    await settle();
    expect(passes).toEqual([0]);
    clock.advance(1);
    await settle();
    clock.advance(1000);
    await settle();
    expect(passes).toEqual([0, 1000, 2000]);
    await loop.stop();
    await loop.stop(); // idempotent
    clock.advance(5000);
    await settle();
    expect(passes).toEqual([0, 1000, 2000]);
  });

  it('goes again at once while a pass says more is waiting', async () => {
    const clock = new ManualClock(0);
    const results = [100, 100, 3];
    let passes = 0;
    const loop = new PeriodicLoop({
      clock,
      log,
      what: 'batch',
      intervalMs: 1000,
      runOnce: async () => results[passes++] ?? 0,
      again: (n) => n === 100,
    });
    loop.start();
    await settle();
    expect(passes).toBe(3); // two full batches back to back, then a partial one, then the pause
    await loop.stop();
  });

  it('a failing pass is logged and retried after a doubling backoff capped at 5 s, never thrown', async () => {
    const clock = new ManualClock(0);
    const at: number[] = [];
    const loop = new PeriodicLoop({
      clock,
      log,
      what: 'flaky',
      intervalMs: 60_000,
      runOnce: async () => {
        at.push(clock.now());
        throw new Error('connection terminated');
      },
    });
    loop.start();
    for (let i = 0; i < 210; i++) {
      await settle();
      clock.advance(100);
    }
    const gaps = at.slice(1).map((t, i) => t - at[i]);
    expect(gaps).toEqual([200, 400, 800, 1600, 3200, 5000, 5000]);
    await loop.stop();
  });
});
