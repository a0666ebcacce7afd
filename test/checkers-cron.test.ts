import { describe, expect, it } from 'vitest';
import { checkCronOccurrence, parseOccurrenceKey } from '../harness/checkers/cron-occurrence.ts';
import { oracleMaterialized, oracleOccurrences, type OracleDstPolicy } from '../harness/oracle/cron-walk.ts';
import { expectedCron } from '../harness/runner/cron-facts.ts';
import { planScenario } from '../harness/scenario.ts';
import { SeededRng } from '../engine/rng.ts';
import { SCENARIOS } from '../scenarios/index.ts';
import { DST_CASES } from './support/cron-dst-cases.ts';
import { finalState, job } from './support/history-builder.ts';

const iso = (ms: number[]) => ms.map((t) => new Date(t).toISOString());
const at = (s: string) => Date.parse(s);
const POLICIES: OracleDstPolicy[] = ['shift-first', 'shift-both', 'skip-first', 'skip-both'];

describe('cron oracle (a brute-force walk over the zone database, no engine/cron code)', () => {
  for (const c of DST_CASES) {
    for (const policy of POLICIES) {
      it(`${c.name}, ${policy}: the hand-written instants`, () => {
        const got = oracleOccurrences({ id: 's', cron: c.cron, timezone: c.timezone, dstPolicy: policy }, at(c.from), at(c.to));
        expect(iso(got)).toEqual(c.expected[policy]);
      });
    }
  }

  it('interval schedules keep real elapsed time through both New York transitions, whatever the policy', () => {
    for (const policy of POLICIES) {
      const spring = oracleOccurrences({ id: 's', cron: '*/5 * * * *', timezone: 'America/New_York', dstPolicy: policy }, at('2026-03-08T06:40:00Z'), at('2026-03-08T07:10:00Z'));
      expect(iso(spring)).toEqual(['06:45', '06:50', '06:55', '07:00', '07:05', '07:10'].map((m) => `2026-03-08T${m}:00.000Z`));
      const fall = oracleOccurrences({ id: 's', cron: '*/5 * * * *', timezone: 'America/New_York', dstPolicy: policy }, at('2026-11-01T04:55:00Z'), at('2026-11-01T07:00:00Z'));
      expect(fall).toHaveLength(25); // 2 h 5 min of real time: both passes of 01:xx
      expect(fall.every((t, i) => i === 0 || t - fall[i - 1] === 300_000)).toBe(true);
    }
  });

  it('two readings inside one gap shift onto one instant and run once; Lord Howe hourly keeps the local minute', () => {
    expect(iso(oracleOccurrences({ id: 's', cron: '0,30 2 8 3 *', timezone: 'America/New_York' }, at('2026-03-08T00:00:00Z'), at('2026-03-09T00:00:00Z')))).toEqual(['2026-03-08T07:00:00.000Z']);
    const hourly = oracleOccurrences({ id: 's', cron: '0 * * * *', timezone: 'Australia/Lord_Howe' }, at('2026-10-03T13:30:00Z'), at('2026-10-03T16:00:00Z'));
    expect(iso(hourly)).toEqual(['2026-10-03T14:30:00.000Z', '2026-10-03T16:00:00.000Z']);
  });

  it('catch-up: missed occurrences before the first tick are kept by all, the newest by latest, none by none', () => {
    const s = { id: 's', cron: '*/5 * * * *' };
    const from = at('2026-01-01T12:00:00Z');
    const tick = at('2026-01-01T13:00:30Z');
    const horizon = at('2026-01-01T13:10:00Z');
    expect(oracleMaterialized({ ...s, catchUp: 'all' }, from, tick, horizon, 3_600_000)).toHaveLength(12 + 2);
    expect(iso(oracleMaterialized({ ...s, catchUp: 'latest' }, from, tick, horizon, 3_600_000))).toEqual(['13:00', '13:05', '13:10'].map((m) => `2026-01-01T${m}:00.000Z`));
    expect(iso(oracleMaterialized({ ...s, catchUp: 'none' }, from, tick, horizon, 3_600_000))).toEqual(['13:05', '13:10'].map((m) => `2026-01-01T${m}:00.000Z`));
  });

  it('refuses what it does not model, naming the field', () => {
    expect(() => oracleOccurrences({ id: 's', cron: '0 0 * JAN *' }, 0, 60_000)).toThrow(/month: "JAN"/);
  });

  for (const name of ['dst-spring-forward', 'dst-fall-back']) {
    it(`${name}: the oracle derives exactly the scenario's hand-written expected keys at its default duration`, () => {
      const s = SCENARIOS[name];
      const faults = planScenario(s, new SeededRng(s.seed)).faults;
      const fromDbMs = 1_000_000;
      const times = { fromDbMs, toDbMs: fromDbMs + s.durationS * 1000, fromT: 0, schedulesAddedDbMs: fromDbMs - 2_000 };
      const got = expectedCron(s, [], times, faults);
      const hand = (s.checkers['one-job-per-cron-occurrence'] as { expectedKeys: string[] }).expectedKeys;
      expect([...got.expectedKeys].sort()).toEqual([...hand].sort());
    });
  }

  it('cron-skew: a non-empty expected window at its default duration, every occurrence after the add allowed', () => {
    const s = SCENARIOS['cron-skew'];
    const fromDbMs = at('2026-12-01T09:00:10Z');
    const times = { fromDbMs, toDbMs: fromDbMs + s.durationS * 1000, fromT: 5_000, schedulesAddedDbMs: fromDbMs - 3_000 };
    const history = [{ t: 4_000, node: 'scheduler-1', type: 'cron:materialized' as const, scheduleId: 'minutely', occurrences: 3, inserted: 3, nodeId: 'scheduler-1' }];
    const got = expectedCron(s, history, times, []);
    // Must: (09:00:11, 09:01:24]: 09:01 for each of the eight minutely schedules (in any zone the same
    // instant: every zone's offset is whole minutes); rollup (*/2) has none there.
    const minutely = ['berlin-minutely', 'minutely', ...[1, 2, 3, 4, 5, 6].map((i) => `minutely-${i}`)];
    expect(got.expectedKeys.sort()).toEqual(minutely.map((id) => `cron:${id}:2026-12-01T09:01:00.000Z`).sort());
    expect(got.allowedKeys).toContain('cron:rollup:2026-12-01T09:02:00.000Z');
    expect(got.allowedKeys).not.toContain('cron:minutely:2026-12-01T09:00:00.000Z'); // before the add: a back-fill
    // Its cron-rewind faults set progress 30 s back (to 08:59:45 at the first): catch-up may then write 09:00.
    const rewound = expectedCron(s, history, times, planScenario(s, new SeededRng(s.seed)).faults);
    expect(rewound.allowedKeys).toContain('cron:minutely:2026-12-01T09:00:00.000Z');
    expect([...rewound.expectedKeys].sort()).toEqual([...got.expectedKeys].sort());
  });
});

describe('one-job-per-cron-occurrence', () => {
  const cronJob = (id: number, key: string, runAtMs = parseOccurrenceKey(key)?.instantMs) => job(id, 'done', { idempotencyKey: key, runAtMs });
  const none = { expectedKeys: [], allowedKeys: [] };

  it('parses occurrence keys whose ISO instant itself holds colons, and epoch-ms instants', () => {
    expect(parseOccurrenceKey('cron:nightly:2026-03-08T02:30:00.000Z')).toEqual({ schedule: 'nightly', instantMs: Date.UTC(2026, 2, 8, 2, 30) });
    expect(parseOccurrenceKey('cron:a.b-c@1772937000000')).toEqual({ schedule: 'a.b-c', instantMs: 1772937000000 });
    expect(parseOccurrenceKey('op:7')).toBeUndefined();
  });

  it('passes when each expected occurrence exists once at its instant, and an allowed one may too', () => {
    const keys = ['cron:s:2026-03-08T01:00:00.000Z', 'cron:s:2026-03-08T01:05:00.000Z'];
    const ahead = 'cron:s:2026-03-08T01:10:00.000Z';
    const r = checkCronOccurrence([], finalState([cronJob(1, keys[0]), cronJob(2, keys[1]), cronJob(4, ahead), job(3, 'done')]), { expectedKeys: keys, allowedKeys: [...keys, ahead] });
    expect(r.pass).toBe(true);
    expect(r.figure).toBe('3 occurrence jobs: 0 duplicated, 0 with run_at off their instant, 0 missing and 0 unexpected of 2 expected (3 allowed)');
    expect(r.judged).toEqual({ n: 2, what: 'expected cron occurrences' });
  });

  it('counts what it judged per DST policy (interval schedules apart), catch-up policy and zone, from the schedules the database holds', () => {
    const keys = ['cron:nightly:2026-03-08T07:00:00.000Z', 'cron:every:2026-03-08T06:55:00.000Z', 'cron:every:2026-03-08T07:00:00.000Z'];
    const schedules = [
      { id: 'nightly', cron: '30 2 * * *', timezone: 'America/New_York', dstPolicy: 'shift-first', catchUp: 'none' },
      { id: 'skipped', cron: '30 2 * * *', timezone: 'America/New_York', dstPolicy: 'skip-both', catchUp: 'none' },
      { id: 'every', cron: '*/5 * * * *', timezone: 'Europe/Berlin', dstPolicy: 'shift-first', catchUp: 'all' },
    ];
    const r = checkCronOccurrence([], finalState(keys.map((k, i) => cronJob(i + 1, k)), { schedules }), { expectedKeys: keys, allowedKeys: [] });
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 3, what: 'expected cron occurrences' });
    expect(r.figure).toMatch(
      /; judged \(schedules\/occurrences\) by DST policy: interval 1\/2, shift-first 1\/1, skip-both 1\/0; by catch-up: all 1\/2, none 2\/1; by zone: America\/New_York 2\/1, Europe\/Berlin 1\/2$/,
    );
  });

  it('fails (negative control) on the same occurrence twice under two spellings of its instant, even with nothing expected', () => {
    const r = checkCronOccurrence([], finalState([cronJob(1, 'cron:s:2026-03-08T01:00:00.000Z'), cronJob(2, 'cron:s:2026-03-08T02:00:00+01:00')]), none);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ duplicate: ['cron:s:2026-03-08T01:00:00.000Z', 'cron:s:2026-03-08T02:00:00+01:00'] }]);
  });

  it('fails (negative control) when a cron job runs at another instant than its occurrence', () => {
    const key = 'cron:s:2026-03-08T07:00:00.000Z';
    const r = checkCronOccurrence([], finalState([cronJob(1, key, at('2026-03-08T07:30:00Z'))]), { expectedKeys: [key], allowedKeys: [] });
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ wrongRunAt: { key, runAt: '2026-03-08T07:30:00.000Z' } }]);
  });

  it('fails when an expected occurrence is missing, or an unexpected one ran (a doubled fall-back hour)', () => {
    const r = checkCronOccurrence([], finalState([cronJob(1, 'cron:s:2026-10-25T00:30:00.000Z'), cronJob(2, 'cron:s:2026-10-25T01:30:00.000Z')]), {
      expectedKeys: ['cron:s:2026-10-25T00:30:00.000Z', 'cron:s:2026-10-25T02:30:00.000Z'],
      allowedKeys: [],
    });
    expect(r.pass).toBe(false);
    expect(r.figure).toBe('2 occurrence jobs: 0 duplicated, 0 with run_at off their instant, 1 missing and 1 unexpected of 2 expected (0 allowed)');
  });

  it('is unknown when the window expected nothing, even if rows exist', () => {
    expect(checkCronOccurrence([], finalState([job(1, 'done')]), none).pass).toBe('unknown');
    const r = checkCronOccurrence([], finalState([cronJob(1, 'cron:s:2026-03-08T01:00:00.000Z')]), none);
    expect(r.pass).toBe('unknown');
    expect(r.figure).toMatch(/nothing to judge/);
  });
});
