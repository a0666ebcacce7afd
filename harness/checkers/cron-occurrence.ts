import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface CronOccurrenceBounds {
  /**
   * The occurrence keys the schedules should have produced in the run
   * (`cron:<schedule>:<instant>`). Default [] : only duplicates are checked.
   * When given, a missing one fails, and so does one that should not exist
   * (a second run of 01:30 on a fall-back night under a run-once policy).
   */
  expectedKeys: string[];
}

/** One materialized occurrence: which schedule, and the instant it fires, as epoch ms. */
export interface Occurrence {
  schedule: string;
  instantMs: number;
}

/**
 * Parses `cron:<schedule>:<instant>` (also `cron:<schedule>@<instant>`), where
 * the instant is ISO-8601 (which itself contains colons) or epoch ms. The
 * schedule is everything before the first separator whose remainder parses as
 * an instant. Returns undefined for keys that are not occurrence keys.
 */
export function parseOccurrenceKey(key: string): Occurrence | undefined {
  if (!key.startsWith('cron:')) return undefined;
  const rest = key.slice(5);
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] !== ':' && rest[i] !== '@') continue;
    const instant = parseInstant(rest.slice(i + 1));
    if (i > 0 && instant !== undefined) return { schedule: rest.slice(0, i), instantMs: instant };
  }
  return undefined;
}

function parseInstant(s: string): number | undefined {
  if (/^\d{10,}$/.test(s)) return Number(s);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(s)) return undefined;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * One job per cron occurrence. The unique idempotency key already refuses two
 * rows with the same text; this also catches the same occurrence under two
 * spellings (a node that wrote `+01:00` and one that wrote `Z`), by comparing
 * (schedule, instant). With expected keys it also finds missing and extra runs.
 */
export function checkCronOccurrence(_history: readonly HistoryEvent[], final: FinalState, bounds: CronOccurrenceBounds): InvariantResult {
  const seen = new Map<string, string[]>();
  const unparsable: string[] = [];
  for (const job of final.jobs) {
    const key = job.idempotencyKey;
    if (!key?.startsWith('cron:')) continue;
    const occ = parseOccurrenceKey(key);
    if (!occ) {
      unparsable.push(key);
      continue;
    }
    const id = `${occ.schedule}@${occ.instantMs}`;
    seen.set(id, [...(seen.get(id) ?? []), key]);
  }
  const duplicates = [...seen.values()].filter((keys) => keys.length > 1);
  const expected = new Map<string, string>();
  const badExpected: string[] = [];
  for (const key of bounds.expectedKeys) {
    const occ = parseOccurrenceKey(key);
    if (occ) expected.set(`${occ.schedule}@${occ.instantMs}`, key);
    else badExpected.push(key);
  }
  const missing = [...expected].filter(([id]) => !seen.has(id)).map(([, key]) => key);
  const extra = expected.size > 0 ? [...seen].filter(([id]) => !expected.has(id)).map(([, keys]) => keys[0]) : [];
  const examples = [
    ...firstN(duplicates).map((keys) => ({ duplicate: keys })),
    ...firstN(missing).map((key) => ({ missing: key })),
    ...firstN(extra).map((key) => ({ extra: key })),
    ...firstN(unparsable).map((key) => ({ unparsable: key })),
  ];
  const occurrences = [...seen.values()].reduce((n, keys) => n + keys.length, 0);
  const broken = duplicates.length + missing.length + extra.length + unparsable.length + badExpected.length;
  return {
    name: 'one-job-per-cron-occurrence',
    pass: broken > 0 ? false : occurrences === 0 && expected.size === 0 ? 'unknown' : true,
    figure:
      `${fmt(occurrences)} occurrence jobs: ${fmt(duplicates.length)} duplicated, ${fmt(missing.length)} missing and ` +
      `${fmt(extra.length)} unexpected of ${fmt(expected.size)} expected` +
      (unparsable.length + badExpected.length ? `; ${fmt(unparsable.length + badExpected.length)} keys not of the form cron:<schedule>:<instant>` : ''),
    bound: expected.size > 0 ? 'each expected occurrence exactly once, nothing else' : 'no occurrence twice',
    ...(examples.length ? { examples } : {}),
  };
}

export const cronOccurrence: CheckerDef<CronOccurrenceBounds> = {
  name: 'one-job-per-cron-occurrence',
  says: 'each cron occurrence became exactly one job, and none expected is missing',
  check: checkCronOccurrence,
  bounds: { expectedKeys: 'string[]' },
  defaults: { expectedKeys: [] },
};
