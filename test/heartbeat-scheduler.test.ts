// HeartbeatScheduler: one loop renews every running job's lease once it has
// run a heartbeat period, and never a job that has left it. Pure: a ManualClock.
import { expect, it } from 'vitest';
import { ManualClock } from '../engine/clock.ts';
import { HeartbeatScheduler, type Beating } from '../engine/worker/heartbeats.ts';

/** A run that renews instantly: each beat moves its next one a period on. */
function run(clock: ManualClock, periodMs: number): Beating & { beats: number[] } {
  const r = {
    beats: [] as number[],
    nextBeatAt: clock.now() + periodMs,
    leaseMayEndAt: Number.POSITIVE_INFINITY,
    expire() {},
    beat() {
      r.beats.push(clock.now());
      r.nextBeatAt = clock.now() + periodMs;
    },
  };
  return r;
}

/** Lets the scheduler's loop run after a clock move (its sleep resolves on a microtask). */
const settle = () => new Promise<void>((resolve) => queueMicrotask(() => queueMicrotask(resolve)));

async function advance(clock: ManualClock, ms: number, stepMs = 10): Promise<void> {
  for (let t = 0; t < ms; t += stepMs) {
    clock.advance(stepMs);
    for (let i = 0; i < 5; i++) await settle();
  }
}

it('beats each run once per period from when it was added, and a removed run never', async () => {
  const clock = new ManualClock(0);
  const scheduler = new HeartbeatScheduler(clock, 100);
  const a = run(clock, 100);
  scheduler.add(a);
  await advance(clock, 50);
  const b = run(clock, 100); // added at 50: due at 150
  scheduler.add(b);
  const short = run(clock, 100);
  scheduler.add(short);
  await advance(clock, 20);
  scheduler.delete(short); // finished before its first period: never renewed
  await advance(clock, 260);
  await scheduler.stop();
  expect(a.beats).toEqual([100, 200, 300]);
  expect(b.beats).toEqual([150, 250]);
  expect(short.beats).toEqual([]);
});

it('stops beating once stopped', async () => {
  const clock = new ManualClock(0);
  const scheduler = new HeartbeatScheduler(clock, 100);
  const a = run(clock, 100);
  scheduler.add(a);
  await advance(clock, 110);
  await scheduler.stop();
  await advance(clock, 300);
  expect(a.beats).toEqual([100]);
});
