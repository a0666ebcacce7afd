// Clock.timer, the cancellable timer the worker loop pauses on, and startTimer's fallback for a clock without one.
import { describe, expect, it } from 'vitest';
import { ManualClock, SkewedClock, startTimer, systemClock, type Clock } from '../engine/clock.ts';

describe('clock timers', () => {
  it('a ManualClock timer fires when time passes it, and not once cancelled', () => {
    const clock = new ManualClock(1_000);
    const fired: string[] = [];
    startTimer(clock, 50, () => fired.push('a'));
    const b = startTimer(clock, 50, () => fired.push('b'));
    clock.advance(49);
    expect(fired).toEqual([]);
    b.cancel();
    clock.advance(1);
    expect(fired).toEqual(['a']);
    clock.advance(1_000);
    expect(fired).toEqual(['a']);
  });

  it('the system clock fires after the delay, and not once cancelled; a skewed clock times on its base', async () => {
    const fired: string[] = [];
    const started = Date.now();
    startTimer(systemClock, 20, () => fired.push(`system after ${Date.now() - started} ms`));
    startTimer(new SkewedClock(systemClock, -3_600_000), 20, () => fired.push('skewed'));
    startTimer(systemClock, 20, () => fired.push('cancelled')).cancel();
    await systemClock.sleep(60);
    expect(fired).toHaveLength(2);
    expect(fired).toContain('skewed');
    expect(Number(fired.find((f) => f.startsWith('system'))!.match(/\d+/)![0])).toBeGreaterThanOrEqual(19);
  });

  it('a clock without timer() gets one made of its sleep, cancelled through an AbortSignal', async () => {
    const sleeps: number[] = [];
    const sleepOnly: Clock = { now: () => systemClock.now(), sleep: (ms, signal) => (sleeps.push(ms), systemClock.sleep(ms, signal)) };
    const fired: string[] = [];
    startTimer(sleepOnly, 10, () => fired.push('kept'));
    startTimer(sleepOnly, 10, () => fired.push('cancelled')).cancel();
    await systemClock.sleep(40);
    expect(sleeps).toEqual([10, 10]);
    expect(fired).toEqual(['kept']);
  });

  it('a skewed clock set to a slower rate reads and times at that rate from then on, without a step; jump() still steps it', () => {
    const base = new ManualClock(10_000);
    const clock = new SkewedClock(base, 500);
    base.advance(1_000);
    expect(clock.now()).toBe(11_500);
    clock.setRate(0.5);
    expect(clock.now()).toBe(11_500);
    base.advance(1_000);
    expect(clock.now()).toBe(12_000);
    expect(clock.skewMs).toBe(0);
    const fired: number[] = [];
    startTimer(clock, 100, () => fired.push(base.now()));
    base.advance(199);
    expect(fired).toEqual([]);
    base.advance(1);
    expect(fired).toEqual([12_200]);
    // A sleep under way when the rate changes lasts until the clock has advanced its length: 100 ms at 0.5 is
    // 200 on the base clock; after 100 of them (50 of its own), the rest runs at the new rate.
    startTimer(clock, 100, () => fired.push(base.now()));
    base.advance(100);
    clock.setRate(1);
    base.advance(49);
    expect(fired).toEqual([12_200]);
    base.advance(1);
    expect(fired).toEqual([12_200, 12_350]);
    // A step moves the reading, not the length of a sleep.
    startTimer(clock, 100, () => fired.push(base.now()));
    clock.jump(-300);
    expect(clock.now()).toBe(11_900);
    base.advance(100);
    expect(fired).toEqual([12_200, 12_350, 12_450]);
    expect(() => clock.setRate(0)).toThrow(/clock rate: expected a finite number above 0, got 0/);
  });
});
