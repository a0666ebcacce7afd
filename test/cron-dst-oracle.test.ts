import { describe, expect, it } from 'vitest';
import { parseCron } from '../engine/cron/expression.ts';
import { occurrencesBetween } from '../engine/cron/occurrences.ts';
import { DST_POLICIES, splitDstPolicy, type DstPolicy } from '../engine/cron/policy.ts';

/**
 * The schedule's instants on every DST night of a year, in zones chosen for
 * their odd rules, against an oracle that shares none of engine/cron/zone.ts's
 * reasoning: it reads every UTC minute around each transition through
 * Intl.DateTimeFormat and applies the policy as docs/cron-dst.md states it. A
 * reading that occurs once is its run; twice (an overlap): `first` takes the
 * earlier, `both` each; never (a gap): `shift` runs at the first instant that
 * reads later, which may fall on the next day (Nuuk's gap is 23:00-23:59),
 * and `skip` does not run. An interval schedule (`*\/15`) runs at every
 * instant whose reading matches, both passes of an overlap, none of a gap.
 * The hand-written tables (cron-occurrences.test.ts) say what is meant; this
 * says it holds beyond the zones someone thought of.
 */

const MINUTE = 60_000;
const DAY = 86_400_000;

/** Midnight transitions (Santiago, Havana), 30 min (Lord Howe), 2 h (Troll), 45 min offsets (Chatham), negative DST (Dublin), Ramadan suspensions (Casablanca), 23:00 gaps (Nuuk), and the ordinary ones. */
const ZONES = [
  'America/New_York',
  'Europe/Berlin',
  'Europe/Dublin',
  'Australia/Lord_Howe',
  'Antarctica/Troll',
  'Pacific/Chatham',
  'America/Santiago',
  'America/Havana',
  'Asia/Jerusalem',
  'America/St_Johns',
  'America/Nuuk',
  'Africa/Casablanca',
  'Asia/Gaza',
  'Asia/Beirut',
  'Atlantic/Azores',
  'Australia/Sydney',
] as const;
const DAILY = ['0 0 * * *', '30 0 * * *', '0 1 * * *', '15 1 * * *', '45 1 * * *', '30 2 * * *', '0 3 * * *', '30 23 * * *', '59 23 * * *'] as const;
const INTERVALS = ['*/15 * * * *', '*/30 * * * *'] as const;
const YEAR = 2026;

interface Reading {
  t: number;
  date: string;
  /** Minutes since the local midnight of `date`. */
  minute: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();
function read(tz: string, t: number): Reading {
  let f = formats.get(tz);
  if (!f) formats.set(tz, (f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' })));
  const p = Object.fromEntries(f.formatToParts(new Date(t)).map((x) => [x.type, x.value]));
  return { t, date: `${p.year}-${p.month}-${p.day}`, minute: Number(p.hour) * 60 + Number(p.minute) };
}

/** [from, to] windows of four days around each change of the zone's offset in the year, found hour by hour. */
function transitionWindows(tz: string): [number, number][] {
  const offset = (t: number) => {
    const r = read(tz, t);
    return Date.parse(`${r.date}T00:00:00Z`) + r.minute * MINUTE - t;
  };
  const out: [number, number][] = [];
  const end = Date.UTC(YEAR + 1, 0, 1);
  let previous = offset(Date.UTC(YEAR, 0, 1));
  for (let t = Date.UTC(YEAR, 0, 1) + 3_600_000; t < end; t += 3_600_000) {
    const now = offset(t);
    if (now !== previous) out.push([t - 2 * DAY, t + 2 * DAY]);
    previous = now;
  }
  return out;
}

function oracleDaily(readings: readonly Reading[], cron: string, policy: DstPolicy, from: number, to: number): number[] {
  const [m, h] = cron.split(' ').map(Number);
  const at = h * 60 + m;
  const { gap, overlap } = splitDstPolicy(policy);
  const exact = new Map<string, number[]>();
  const dates = [...new Set(readings.map((r) => r.date))];
  for (const r of readings) if (r.minute === at) (exact.get(r.date) ?? exact.set(r.date, []).get(r.date)!).push(r.t);
  const out: number[] = [];
  for (const date of dates) {
    const passes = exact.get(date) ?? [];
    let runs: number[];
    if (passes.length === 0) {
      // A gap: the first instant that reads later than (date, at), on this date or after.
      const after = readings.find((r) => r.date > date || (r.date === date && r.minute > at));
      runs = gap === 'shift' && after ? [after.t] : [];
    } else runs = passes.length > 1 && overlap === 'first' ? [passes[0]] : passes;
    out.push(...runs.filter((t) => t > from && t <= to));
  }
  return [...new Set(out)].sort((a, b) => a - b);
}

function oracleInterval(readings: readonly Reading[], cron: string, from: number, to: number): number[] {
  const every = Number(cron.split(' ')[0].slice(2));
  return readings.filter((r) => r.t > from && r.t <= to && r.minute % every === 0).map((r) => r.t);
}

const iso = (ts: number[]) => ts.map((t) => new Date(t).toISOString());

describe(`cron instants on every ${YEAR} DST night against a minute-by-minute oracle`, () => {
  for (const tz of ZONES) {
    it(`${tz}: ${DAILY.length} daily times x ${DST_POLICIES.length} policies and ${INTERVALS.length} intervals`, () => {
      const windows = transitionWindows(tz);
      expect(windows.length, `${tz} changes its offset in ${YEAR}`).toBeGreaterThan(0);
      let judged = 0;
      for (const [from, to] of windows) {
        // One reading per minute, a day beyond the window each side (a gap's end may fall past `to`'s day).
        const readings: Reading[] = [];
        for (let t = from - DAY; t <= to + DAY; t += MINUTE) readings.push(read(tz, t));
        for (const cron of DAILY) {
          for (const policy of DST_POLICIES) {
            const got = occurrencesBetween({ spec: parseCron(cron), timezone: tz, dstPolicy: policy }, from, to);
            expect(iso(got), `${tz} ${cron} ${policy} over ${new Date(from).toISOString()}..${new Date(to).toISOString()}`).toEqual(iso(oracleDaily(readings, cron, policy, from, to)));
            judged += got.length;
          }
        }
        for (const cron of INTERVALS) {
          const want = oracleInterval(readings, cron, from, to);
          for (const policy of DST_POLICIES) {
            expect(iso(occurrencesBetween({ spec: parseCron(cron), timezone: tz, dstPolicy: policy }, from, to)), `${tz} ${cron} ${policy}`).toEqual(iso(want));
          }
          judged += want.length;
        }
      }
      expect(judged).toBeGreaterThan(0);
    });
  }
});
