import { describe, expect, it } from 'vitest';
import { ValidationError } from '../engine/errors.ts';
import { parseCron } from '../engine/cron/expression.ts';
import { dueOccurrences, type DueInput } from '../engine/cron/occurrences.ts';
import { validateCatchUp, validateDstPolicy } from '../engine/cron/policy.ts';
import { validateSchedule } from '../engine/cron/schedule.ts';
import { validateTimeZone } from '../engine/cron/zone.ts';

/** Catch-up decisions and input validation, with no database. */

const every5 = { spec: parseCron('*/5 * * * *'), timezone: 'UTC', dstPolicy: 'shift-first' as const };
const at = (hhmmss: string) => Date.parse(`2026-06-15T${hhmmss}Z`);
const iso = (ts: number[]) => ts.map((t) => new Date(t).toISOString().slice(11, 19));

describe('catch-up after downtime (progress at 12:02, database clock now 13:00:30)', () => {
  const base: Omit<DueInput, 'catchUp'> = {
    fromMs: at('12:02:00'),
    dbNowMs: at('13:00:30'),
    horizonMs: at('13:02:30'),
    catchUpWindowMs: 3_600_000,
  };
  const missedHour = ['12:05:00', '12:10:00', '12:15:00', '12:20:00', '12:25:00', '12:30:00', '12:35:00', '12:40:00', '12:45:00', '12:50:00', '12:55:00', '13:00:00'];

  it('all: every missed occurrence within the window', () => {
    const plan = dueOccurrences(every5, { ...base, catchUp: 'all' });
    expect(iso(plan.enqueue)).toEqual(missedHour);
    expect(plan.dropped).toEqual([]);
    expect(plan.untilMs).toBe(at('13:02:30'));
  });

  it('all: bounded by the window (20 minutes reaches back to 12:40:30)', () => {
    const plan = dueOccurrences(every5, { ...base, catchUp: 'all', catchUpWindowMs: 20 * 60_000 });
    expect(iso(plan.enqueue)).toEqual(['12:45:00', '12:50:00', '12:55:00', '13:00:00']);
  });

  it('latest: only the newest missed one', () => {
    const plan = dueOccurrences(every5, { ...base, catchUp: 'latest' });
    expect(iso(plan.enqueue)).toEqual(['13:00:00']);
    expect(iso(plan.dropped)).toEqual(missedHour.slice(0, -1));
  });

  it('none: none of them', () => {
    const plan = dueOccurrences(every5, { ...base, catchUp: 'none' });
    expect(plan.enqueue).toEqual([]);
    expect(iso(plan.dropped)).toEqual(missedHour);
  });

  it('upcoming occurrences are enqueued under every policy', () => {
    for (const catchUp of ['all', 'latest', 'none'] as const) {
      const plan = dueOccurrences(every5, { ...base, horizonMs: at('13:11:00'), catchUp });
      expect(iso(plan.enqueue.filter((t) => t >= base.dbNowMs))).toEqual(['13:05:00', '13:10:00']);
    }
  });

  it('an occurrence exactly at the database clock is upcoming, not missed', () => {
    const plan = dueOccurrences(every5, { ...base, dbNowMs: at('13:00:00'), catchUp: 'none' });
    expect(iso(plan.enqueue)).toEqual(['13:00:00']);
  });

  it('a node whose own clock jumped ahead misses nothing: due-ness is the database clock', () => {
    // Node clock 14:00 (horizon 14:02), database 13:00:30: 13:05..14:00 are still in the future.
    const plan = dueOccurrences(every5, { ...base, fromMs: at('13:02:30'), horizonMs: at('14:02:00'), catchUp: 'none' });
    expect(plan.enqueue).toHaveLength(12);
    expect(plan.dropped).toEqual([]);
  });

  it('a horizon at or behind the progress does nothing and keeps the progress (a node behind, a clock stepped back)', () => {
    const plan = dueOccurrences(every5, { ...base, horizonMs: at('12:01:00'), catchUp: 'all' });
    expect(plan).toEqual({ enqueue: [], dropped: [], untilMs: at('12:02:00') });
  });

  it('a schedule idle for a year enumerates one window, not a year', () => {
    const plan = dueOccurrences(every5, { ...base, fromMs: at('13:00:30') - 365 * 86_400_000, catchUp: 'none' });
    expect(plan.dropped).toHaveLength(12);
  });
});

describe('bad input is refused with a ValidationError naming the field and what was expected', () => {
  const refuse = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return err as ValidationError;
    }
    throw new Error('expected a ValidationError, nothing was thrown');
  };
  const valid = { id: 'nightly', cron: '30 2 * * *', timezone: 'America/New_York', queue: 'reports' };
  const cases: [string, unknown, string, RegExp][] = [
    ['out-of-range minute', { ...valid, cron: '61 * * * *' }, 'cron', /not a valid cron expression.*0-59/],
    ['garbage expression', { ...valid, cron: 'every tuesday' }, 'cron', /expected 5/],
    ['four fields', { ...valid, cron: '* * * *' }, 'cron', /4 field\(s\); expected 5/],
    ['seconds field', { ...valid, cron: '0 */5 * * * *' }, 'cron', /expected 5.*seconds are not supported/],
    ['hashed field', { ...valid, cron: 'H * * * *' }, 'cron', /hashed "H"/],
    ['@secondly', { ...valid, cron: '@secondly' }, 'cron', /not a supported alias/],
    ['impossible date', { ...valid, cron: '0 0 30 2 *' }, 'cron', /not a valid cron expression/],
    ['empty expression', { ...valid, cron: '' }, 'cron', /expected a cron expression/],
    ['unknown zone', { ...valid, timezone: 'Mars/Olympus_Mons' }, 'timezone', /not a known IANA time zone/],
    ['zone abbreviation', { ...valid, timezone: 'EST5EDTX' }, 'timezone', /not a known IANA time zone/],
    ['unknown DST policy', { ...valid, dstPolicy: 'run-twice' }, 'dstPolicy', /expected one of shift-first, shift-both, skip-first, skip-both/],
    ['unknown catch-up policy', { ...valid, catchUp: 'some' }, 'catchUp', /expected one of all, latest, none/],
    ['id with the key separator', { ...valid, id: 'a:b' }, 'id', /expected 1-64 of/],
    ['bad queue', { ...valid, queue: 'has space' }, 'queue', /not a queue name/],
    ['array payload', { ...valid, payload: [1] }, 'payload', /expected a JSON object/],
    ['reserved payload field', { ...valid, payload: { cron: 1 } }, 'payload.cron', /reserved/],
    ['priority out of range', { ...valid, priority: 10 }, 'priority', /\[0, 9\]/],
  ];
  it.each(cases)('%s', (_label, input, field, message) => {
    const err = refuse(() => validateSchedule(input));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.field).toBe(field);
    expect(err.message).toMatch(message);
    expect(err.message.startsWith(`${field}: `)).toBe(true);
  });

  it('accepts the valid schedule these cases break, with the safe defaults filled in', () => {
    expect(validateSchedule(valid)).toMatchObject({ ...valid, dstPolicy: 'shift-first', catchUp: 'none', enabled: true, priority: 0, maxAttempts: null });
    expect(parseCron('*/5 * * * *').interval).toBe(true);
    expect(parseCron('30 2 * * *').interval).toBe(false);
    expect(parseCron('@daily').interval).toBe(false);
    expect(parseCron('15 * * * mon-fri').interval).toBe(true);
  });

  it('the policy and zone validators name the field they are given', () => {
    expect(refuse(() => validateDstPolicy('nope', 'schedules[3].dstPolicy')).field).toBe('schedules[3].dstPolicy');
    expect(refuse(() => validateCatchUp(undefined)).message).toMatch(/^catchUp: undefined is not a catch-up policy/);
    expect(validateTimeZone('Australia/Lord_Howe')).toBe('Australia/Lord_Howe');
  });
});
