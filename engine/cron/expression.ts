import { CronExpressionParser } from 'cron-parser';
import { ValidationError } from '../errors.ts';

/**
 * Cron expressions, parsed by cron-parser and never by hand.
 *
 * cron-parser is used ONLY to match calendar fields against "floating" wall
 * times: local wall-clock readings encoded as if they were UTC epoch ms, with
 * `tz: 'UTC'` so the library never sees a DST transition. Turning a wall time
 * into instants is ours (zone.ts), because cron-parser's own DST behaviour is
 * not a policy: on 2026-03-08 in America/New_York it moves "30 2 * * *" to
 * 03:30 EDT, but on 2026-10-04 in Australia/Lord_Howe (a 30-minute gap) it
 * silently skips "15 2 * * *"; on fall-back nights it runs a fixed time once
 * but "*\/30" at both passes. Tests in test/cron-occurrences.test.ts pin those
 * observations so an upgrade that changes them is noticed.
 */

/** Aliases with minute resolution; @secondly is refused with the sub-minute forms. */
const ALIASES = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@hourly', '@minutely', '@weekdays', '@weekends']);

/** cron-parser's hashed "H" picks a random value unless seeded: two nodes would disagree on the instant. */
const HASHED = /(^|[^a-z])h($|[^a-z])/i;

export interface CronSpec {
  /** The expression as given (trimmed). */
  expression: string;
  /**
   * True when the hour field allows every hour ("*\/5 * * * *", "0 * * * *"):
   * such schedules follow real elapsed time across DST transitions instead of
   * the schedule's DST policy.
   */
  interval: boolean;
}

/** Milliseconds per bucket of an occurrence key: stampede schedules have minute resolution. */
export const RESOLUTION_MS = 60_000;

function parse(expression: string, fromMs: number) {
  return CronExpressionParser.parse(expression, { tz: 'UTC', currentDate: new Date(fromMs) });
}

/**
 * Parsed expressions, reused across ticks: parsing costs about as much as
 * enumerating a tick's window, and a node asks for the same few hundred
 * expressions every few seconds. Cleared wholesale when it grows past the bound.
 */
const parsed = new Map<string, ReturnType<typeof parse>>();
const MAX_CACHED = 10_000;

function iteratorFrom(expression: string, fromMs: number) {
  let it = parsed.get(expression);
  if (!it) {
    if (parsed.size >= MAX_CACHED) parsed.clear();
    parsed.set(expression, (it = parse(expression, fromMs)));
  } else {
    it.reset(new Date(fromMs));
  }
  return it;
}

/**
 * Checks a 5-field cron expression (minute hour day-of-month month
 * day-of-week) or a minute-resolution alias; throws ValidationError naming
 * `field` and what was expected.
 */
export function parseCron(value: unknown, field = 'cron'): CronSpec {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ValidationError(field, 'expected a cron expression such as "*/5 * * * *" (minute hour day-of-month month day-of-week)');
  }
  const expression = value.trim();
  const tokens = expression.split(/\s+/);
  if (expression.startsWith('@')) {
    if (!ALIASES.has(expression.toLowerCase())) {
      throw new ValidationError(field, `"${expression}" is not a supported alias; expected one of ${[...ALIASES].join(', ')}`);
    }
  } else if (tokens.length !== 5) {
    throw new ValidationError(
      field,
      `"${expression}" has ${tokens.length} field(s); expected 5 (minute hour day-of-month month day-of-week); seconds are not supported`,
    );
  } else if (tokens.some((t) => HASHED.test(t))) {
    throw new ValidationError(field, `"${expression}" uses a hashed "H" field; expected explicit values, so every node computes the same instants`);
  }
  let parsed;
  try {
    parsed = parse(expression, 0);
  } catch (err) {
    throw new ValidationError(field, `"${expression}" is not a valid cron expression: ${(err as Error).message}`);
  }
  if (parsed.fields.second.values.length !== 1 || parsed.fields.second.values[0] !== 0) {
    throw new ValidationError(field, `"${expression}" fires more than once a minute; expected minute resolution`);
  }
  return { expression, interval: parsed.fields.hour.values.length === 24 };
}

/** Largest number of wall times one call may enumerate; a bound against a runaway window. */
export const MAX_WALL_TIMES = 200_000;

/**
 * Floating wall times (local readings encoded as UTC ms) that match the
 * expression, in (fromWallMs, toWallMs], ascending.
 */
export function wallTimesBetween(spec: CronSpec, fromWallMs: number, toWallMs: number): number[] {
  const out: number[] = [];
  if (toWallMs <= fromWallMs) return out;
  // Synchronous from reset to the last next(), so sharing one iterator per expression is safe.
  const it = iteratorFrom(spec.expression, fromWallMs);
  for (;;) {
    const next = it.next().getTime();
    if (next > toWallMs) return out;
    out.push(next);
    if (out.length > MAX_WALL_TIMES) {
      throw new Error(`cron "${spec.expression}": more than ${MAX_WALL_TIMES} occurrences in one window; shorten the window`);
    }
  }
}
