import { describe, expect, it } from 'vitest';
import { ValidationError } from '../engine/errors.ts';
import { SeededRng } from '../engine/rng.ts';
import { findDstTransition } from '../harness/faults/dst-transition.ts';
import { occurrenceTimes, planFaults, type FaultSpec } from '../harness/faults/plan.ts';

const ctx = { workers: 4, schedulers: 2, durationS: 60 };

describe('fault timeline expansion', () => {
  const kills: FaultSpec = { fault: 'worker-kill', atS: 10, everyS: 5, jitterS: 2, untilS: 40, point: 'mid-handler' };

  it('turns "worker-kill every 5±2 s from 10 s to 40 s" into times within those bounds and random worker targets', () => {
    const plan = planFaults([kills], ctx, new SeededRng(1));
    const times = plan.map((a) => a.atMs);
    expect(times[0]).toBe(10_000);
    expect(times.at(-1)).toBeLessThanOrEqual(40_000);
    for (let i = 1; i < times.length; i++) {
      expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(3_000);
      expect(times[i] - times[i - 1]).toBeLessThanOrEqual(7_000);
    }
    // 30 s at 3-7 s gaps: between 5 and 11 repeats after the first.
    expect(times.length).toBeGreaterThanOrEqual(5);
    expect(times.length).toBeLessThanOrEqual(11);
    expect(plan.every((a) => a.targets.length === 1 && a.targets[0].role === 'worker' && a.targets[0].index >= 0 && a.targets[0].index < 4)).toBe(true);
    expect(new Set(plan.map((a) => a.targets[0].index)).size).toBeGreaterThan(1);
    expect(plan[0]).toMatchObject({ seq: 0, fault: 'worker-kill', source: 0, params: { point: 'mid-handler' } });
  });

  it('is deterministic by seed, and one entry does not move when another is added', () => {
    const a = planFaults([kills], ctx, new SeededRng(7));
    expect(planFaults([kills], ctx, new SeededRng(7))).toEqual(a);
    expect(planFaults([kills], ctx, new SeededRng(8))).not.toEqual(a);
    const withMore = planFaults([kills, { fault: 'worker-stop', atS: 12, everyS: 3, jitterS: 1, forS: 2 }], ctx, new SeededRng(7));
    expect(withMore.filter((x) => x.source === 0).map(({ atMs, targets }) => ({ atMs, targets }))).toEqual(a.map(({ atMs, targets }) => ({ atMs, targets })));
  });

  it('merges entries in time order, gives lasting faults their end, and lands global faults on no process', () => {
    const plan = planFaults(
      [
        { fault: 'dependency-outage', atS: 20, forS: 8 },
        { fault: 'db-restart', atS: 5, downS: 3 },
        { fault: 'clock-jump', atS: 20, target: 'scheduler:all', jumpMs: -3_600_000 },
      ],
      ctx,
      new SeededRng(1),
    );
    expect(plan.map((a) => [a.seq, a.fault, a.atMs, a.untilMs])).toEqual([
      [0, 'db-restart', 5_000, 8_000],
      [1, 'dependency-outage', 20_000, 28_000],
      [2, 'clock-jump', 20_000, undefined],
    ]);
    expect(plan[1].targets).toEqual([]);
    expect(plan[2].targets).toEqual([{ role: 'scheduler', index: 0 }, { role: 'scheduler', index: 1 }]);
    expect(plan[2].params).toEqual({ target: 'scheduler:all', jumpMs: -3_600_000 });
  });

  it('resolves a dst fault to the real transition of the zone, and the clock reading that crosses it', () => {
    const [a] = planFaults([{ fault: 'dst', atS: 1, zone: 'America/New_York', transition: 'spring-forward', year: 2026, leadS: 30 }], ctx, new SeededRng(1));
    expect(a.targets).toEqual([{ role: 'scheduler', index: 0 }]);
    expect(a.dst).toEqual({ transitionAtMs: Date.UTC(2026, 2, 8, 7), setClockToMs: Date.UTC(2026, 2, 8, 6, 59, 30), offsetBeforeMs: -5 * 3_600_000, offsetAfterMs: -4 * 3_600_000 });
  });

  it('occurrenceTimes without a repeat is just atS', () => {
    expect(occurrenceTimes({ atS: 3 }, 60, new SeededRng(1))).toEqual([3_000]);
    expect(occurrenceTimes({ atS: 0, everyS: 10 }, 30, new SeededRng(1))).toEqual([0, 10_000, 20_000, 30_000]);
  });
});

describe('DST transitions from the IANA database', () => {
  it('finds spring-forward and fall-back instants, half-hour shifts included', () => {
    expect(findDstTransition('America/New_York', 2026, 'fall-back').atMs).toBe(Date.UTC(2026, 10, 1, 6));
    expect(findDstTransition('Europe/Berlin', 2026, 'spring-forward').atMs).toBe(Date.UTC(2026, 2, 29, 1));
    const lh = findDstTransition('Australia/Lord_Howe', 2026, 'fall-back');
    expect(lh.atMs).toBe(Date.UTC(2026, 3, 4, 15));
    expect(lh.offsetBeforeMs - lh.offsetAfterMs).toBe(30 * 60_000);
  });

  it('refuses a zone without daylight saving time', () => {
    expect(() => findDstTransition('Asia/Tokyo', 2026, 'spring-forward', 'faults[0].zone')).toThrow('faults[0].zone: "Asia/Tokyo" has no spring-forward transition in 2026');
  });
});

describe('fault validation', () => {
  const bad = (f: unknown, message: string | RegExp) => expect(() => planFaults([f as FaultSpec], ctx, new SeededRng(1), 'scenario.faults')).toThrow(message);

  it('names the field and what was expected', () => {
    bad({ fault: 'meteor', atS: 1 }, /^scenario.faults\[0\].fault: expected one of worker-kill, worker-stop, .* got "meteor"$/);
    bad({ fault: 'constructor', atS: 1 }, /^scenario.faults\[0\].fault: expected one of worker-kill, .* got "constructor"$/);
    bad({ fault: 'worker-kill' }, 'scenario.faults[0].atS: expected seconds (a number >= 0), got undefined');
    bad({ fault: 'worker-kill', atS: 90 }, "scenario.faults[0].atS: 90 s is after the run's end (durationS 60)");
    bad({ fault: 'worker-kill', atS: 1, everyS: 2, jitterS: 2 }, 'scenario.faults[0].jitterS: expected less than everyS (2), got 2');
    bad({ fault: 'worker-kill', atS: 1, target: 'worker:4' }, 'scenario.faults[0].target: worker 4 does not exist; the scenario runs 4 (0-3)');
    bad({ fault: 'worker-kill', atS: 1, target: 'node-3' }, /target: expected "worker:<i>"/);
    bad({ fault: 'worker-stop', atS: 1 }, 'scenario.faults[0].forS: is required for worker-stop');
    bad({ fault: 'worker-stop', atS: 1, forS: 2, signal: 'HUP' }, /^scenario.faults\[0\].signal: is not a parameter of worker-stop; expected one of atS, everyS, jitterS, untilS, target, forS, point, resume$/);
    bad({ fault: 'worker-stop', atS: 1, forS: 2, point: 'sometime' }, 'scenario.faults[0].point: expected one of any, in-effect, before-report, mid-slow-job, got "sometime"');
    bad({ fault: 'worker-stop', atS: 1, forS: 2, resume: 'later' }, 'scenario.faults[0].resume: expected one of after, on-takeover, got "later"');
    bad({ fault: 'dst', atS: 1, zone: 'Mars/Olympus', transition: 'fall-back' }, /scenario.faults\[0\].zone: "Mars\/Olympus" is not a known IANA time zone/);
    bad({ fault: 'dependency-outage', atS: 1, forS: 2, errorRate: 1.5 }, 'scenario.faults[0].errorRate: expected a fraction in (0, 1], got 1.5');
    bad({ fault: 'worker-kill', atS: 1, point: 'sometime' }, 'scenario.faults[0].point: expected one of any, mid-handler, in-effect, after-effect, got "sometime"');
    bad({ fault: 'db-restart', atS: 1, lullS: 0.5 }, 'scenario.faults[0].lullS: applies to mode "crash" only, got mode "fast"');
    bad({ fault: 'clock-rate', atS: 1, forS: 2 }, 'scenario.faults[0].rate: is required for clock-rate');
    bad({ fault: 'clock-rate', atS: 1, forS: 2, rate: 2 }, 'scenario.faults[0].rate: expected a fraction in (0, 1], got 2');
    bad({ fault: 'clock-rate', atS: 1, forS: 2, rate: 1 }, 'scenario.faults[0].rate: expected a rate below 1 (a clock that runs slow), got 1');
    expect(() => planFaults([{ fault: 'clock-skew', atS: 1, skewMs: 5 }], { ...ctx, schedulers: 0 }, new SeededRng(1))).toThrow(
      new ValidationError('faults[0].target', 'the scenario runs no scheduler processes'),
    );
  });
});
