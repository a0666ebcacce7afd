import { CronExpressionParser } from 'cron-parser';
import { describe, expect, it } from 'vitest';
import { parseCron } from '../engine/cron/expression.ts';
import { occurrenceKey, occurrencesBetween, type OccurrenceRule } from '../engine/cron/occurrences.ts';
import { DST_POLICIES, type DstPolicy } from '../engine/cron/policy.ts';
import { SeededRng } from '../engine/rng.ts';
import { DST_CASES } from './support/cron-dst-cases.ts';

/** Which instants a schedule names, with no database. Expected lists are written out by hand (see support/cron-dst-cases.ts for the zone rules). */

const rule = (cron: string, timezone: string, dstPolicy: DstPolicy = 'shift-first'): OccurrenceRule => ({
  spec: parseCron(cron),
  timezone,
  dstPolicy,
});
const between = (r: OccurrenceRule, from: string, to: string) =>
  occurrencesBetween(r, Date.parse(from), Date.parse(to)).map((t) => new Date(t).toISOString());

describe('wall-clock schedules on DST nights follow the schedule policy', () => {
  for (const c of DST_CASES) {
    for (const policy of DST_POLICIES) {
      it(`${c.name} [${policy}]`, () => {
        expect(between(rule(c.cron, c.timezone, policy), c.from, c.to)).toEqual(c.expected[policy]);
      });
    }
  }

  it('a time outside the gap or overlap is untouched on the same night (02:30 New York fall-back runs once, EST)', () => {
    for (const policy of DST_POLICIES) {
      expect(between(rule('30 2 * * *', 'America/New_York', policy), '2026-11-01T00:00:00Z', '2026-11-02T00:00:00Z')).toEqual([
        '2026-11-01T07:30:00.000Z',
      ]);
    }
  });

  it('two wall times in one gap shift onto the same instant and run once (its key is the instant)', () => {
    expect(between(rule('0,30 2 * * *', 'America/New_York', 'shift-first'), '2026-03-08T00:00:00Z', '2026-03-09T00:00:00Z')).toEqual([
      '2026-03-08T07:00:00.000Z',
    ]);
  });
});

describe('interval schedules follow real elapsed time whatever the policy', () => {
  it('*/5 in New York keeps 5 minutes apart across the spring-forward gap', () => {
    for (const policy of DST_POLICIES) {
      // 01:50 EST, 01:55 EST, 03:00 EDT, 03:05, 03:10, 03:15 EDT
      expect(between(rule('*/5 * * * *', 'America/New_York', policy), '2026-03-08T06:45:00Z', '2026-03-08T07:15:00Z')).toEqual([
        '2026-03-08T06:50:00.000Z',
        '2026-03-08T06:55:00.000Z',
        '2026-03-08T07:00:00.000Z',
        '2026-03-08T07:05:00.000Z',
        '2026-03-08T07:10:00.000Z',
        '2026-03-08T07:15:00.000Z',
      ]);
    }
  });

  it('*/5 in New York runs through both passes of the repeated hour', () => {
    for (const policy of DST_POLICIES) {
      // 01:50 EDT, 01:55 EDT, 01:00 EST, 01:05, 01:10, 01:15 EST
      expect(between(rule('*/5 * * * *', 'America/New_York', policy), '2026-11-01T05:45:00Z', '2026-11-01T06:15:00Z')).toEqual([
        '2026-11-01T05:50:00.000Z',
        '2026-11-01T05:55:00.000Z',
        '2026-11-01T06:00:00.000Z',
        '2026-11-01T06:05:00.000Z',
        '2026-11-01T06:10:00.000Z',
        '2026-11-01T06:15:00.000Z',
      ]);
    }
  });

  it('*/5 and */15 are evenly spaced through every DST day of all three zones', () => {
    const days: [string, string][] = [
      ['America/New_York', '2026-03-08'],
      ['America/New_York', '2026-11-01'],
      ['Europe/Berlin', '2026-03-29'],
      ['Europe/Berlin', '2026-10-25'],
      ['Australia/Lord_Howe', '2026-04-04'],
      ['Australia/Lord_Howe', '2026-10-03'],
    ];
    for (const [tz, day] of days) {
      for (const [cron, stepMin] of [['*/5 * * * *', 5], ['*/15 * * * *', 15]] as const) {
        const ts = occurrencesBetween(rule(cron, tz), Date.parse(`${day}T00:00:00Z`), Date.parse(`${day}T00:00:00Z`) + 2 * 86_400_000);
        const gaps = new Set(ts.slice(1).map((t, i) => (t - ts[i]) / 60_000));
        expect([...gaps], `${cron} ${tz} ${day}`).toEqual([stepMin]);
        expect(ts.length).toBe((2 * 24 * 60) / stepMin);
      }
    }
  });

  it('hourly in Lord Howe keeps the local minute, so the half-hour shift makes one 90-minute interval each way (documented)', () => {
    // 00:00 LHST 13:30Z, 01:00 LHST 14:30Z, (02:00 does not exist), 03:00 LHDT 16:00Z, 04:00 LHDT 17:00Z
    expect(between(rule('0 * * * *', 'Australia/Lord_Howe'), '2026-10-03T13:00:00Z', '2026-10-03T17:00:00Z')).toEqual([
      '2026-10-03T13:30:00.000Z',
      '2026-10-03T14:30:00.000Z',
      '2026-10-03T16:00:00.000Z',
      '2026-10-03T17:00:00.000Z',
    ]);
    // 01:00 LHDT 14:00Z, (01:00 does not repeat: only 01:30-02:00 does), 02:00 LHST 15:30Z
    expect(between(rule('0 * * * *', 'Australia/Lord_Howe'), '2026-04-04T13:30:00Z', '2026-04-04T16:30:00Z')).toEqual([
      '2026-04-04T14:00:00.000Z',
      '2026-04-04T15:30:00.000Z',
      '2026-04-04T16:30:00.000Z',
    ]);
  });
});

describe('windows', () => {
  it('slicing a DST week at random points yields exactly the occurrences of the whole week', () => {
    const rng = new SeededRng('cron-slices');
    for (const [cron, tz] of [
      ['*/5 * * * *', 'America/New_York'],
      ['30 1 * * *', 'America/New_York'],
      ['30 2 * * *', 'Europe/Berlin'],
      ['15 2 * * *', 'Australia/Lord_Howe'],
    ]) {
      for (const policy of DST_POLICIES) {
        const r = rule(cron, tz, policy);
        const [a, b] = tz === 'Australia/Lord_Howe' ? ['2026-09-30T00:00:00Z', '2026-10-07T00:00:00Z'] : ['2026-10-29T00:00:00Z', '2026-11-05T00:00:00Z'];
        const start = Date.parse(a);
        const end = Date.parse(b);
        const whole = occurrencesBetween(r, start, end);
        const sliced: number[] = [];
        for (let from = start; from < end; ) {
          const to = Math.min(end, from + rng.int(1, 180) * 60_000 + rng.int(0, 59_999));
          sliced.push(...occurrencesBetween(r, from, to));
          from = to;
        }
        expect(sliced, `${cron} ${tz} ${policy}`).toEqual(whole);
        expect(whole.length).toBeGreaterThan(0);
      }
    }
  });

  it('the window is (from, to]: an occurrence at `from` belongs to the previous window', () => {
    const r = rule('*/5 * * * *', 'UTC');
    expect(between(r, '2026-06-01T00:00:00Z', '2026-06-01T00:10:00Z')).toEqual(['2026-06-01T00:05:00.000Z', '2026-06-01T00:10:00.000Z']);
  });
});

describe('occurrence keys', () => {
  it('are schedule id plus the UTC instant bucketed to the minute', () => {
    expect(occurrenceKey('nightly', Date.parse('2026-03-08T07:00:00Z'))).toBe('cron:nightly:2026-03-08T07:00:00.000Z');
    expect(occurrenceKey('nightly', Date.parse('2026-03-08T07:00:59.999Z'))).toBe('cron:nightly:2026-03-08T07:00:00.000Z');
    expect(occurrenceKey('nightly', Date.parse('2026-03-08T07:01:00Z'))).not.toBe(occurrenceKey('nightly', Date.parse('2026-03-08T07:00:00Z')));
  });
});

describe("what cron-parser does on its own on DST nights (why the policy is ours)", () => {
  const next = (cron: string, tz: string, from: string, n: number) => {
    const it = CronExpressionParser.parse(cron, { tz, currentDate: new Date(from) });
    return Array.from({ length: n }, () => it.next().toDate().toISOString());
  };
  it('moves a New York 02:30 to 03:30 EDT, an hour after the gap, not to its end', () => {
    expect(next('30 2 * * *', 'America/New_York', '2026-03-08T00:00:00Z', 1)).toEqual(['2026-03-08T07:30:00.000Z']);
  });
  it('silently skips Lord Howe 02:15 in its 30-minute gap', () => {
    expect(next('15 2 * * *', 'Australia/Lord_Howe', '2026-10-03T00:00:00Z', 1)).toEqual(['2026-10-04T15:15:00.000Z']);
  });
  it('runs a fixed time once on the fall-back night but */30 at both passes', () => {
    expect(next('30 1 * * *', 'America/New_York', '2026-11-01T00:00:00Z', 2)).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']);
    expect(next('*/30 * * * *', 'America/New_York', '2026-11-01T05:10:00Z', 3)).toEqual([
      '2026-11-01T05:30:00.000Z',
      '2026-11-01T06:00:00.000Z',
      '2026-11-01T06:30:00.000Z',
    ]);
  });
});
