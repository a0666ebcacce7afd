import { matchesReading, parseCronFields, type CronFields, type WallReading } from './cron-fields.ts';

/**
 * The harness's cron oracle: which instants a schedule should fire at,
 * found by brute force. It walks every UTC minute of the window, asks the
 * platform's zone database (Intl.DateTimeFormat, not luxon or cron-parser,
 * which the engine uses) what the wall clock reads at that instant, and
 * applies the DST policy as docs/cron-dst.md states it:
 *
 * - interval schedules (hour field `*`): every instant whose reading matches,
 *   whatever the policy (both passes of a repeated hour, nothing in a gap);
 * - otherwise a reading seen for the second time (a fall-back night's second
 *   pass) runs only under `*-both`; a reading the clock skipped (spring
 *   forward) runs under `shift-*` at the first instant after the gap, and
 *   readings that shift onto the same instant run once; under `skip-*` not.
 *
 * It shares no code with engine/cron, so a bug there cannot hide in both.
 */
export type OracleDstPolicy = 'shift-first' | 'shift-both' | 'skip-first' | 'skip-both';
export type OracleCatchUp = 'none' | 'latest' | 'all';

export interface OracleSchedule {
  id: string;
  cron: string;
  timezone?: string;
  dstPolicy?: OracleDstPolicy;
  catchUp?: OracleCatchUp;
}

const MINUTE_MS = 60_000;
/** Walked before the window so a reading's first pass or a gap's start is seen even when the window opens inside it. */
const LEAD_MS = 4 * 3_600_000;

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' });
    formatters.set(zone, f);
  }
  return f;
}

/** The wall reading in `zone` at instant `ms`, as a count of local minutes since 1970-01-01 00:00 local. */
export function localMinute(zone: string, ms: number): number {
  const p: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(ms)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour % 24, p.minute) / MINUTE_MS;
}

function reading(localMin: number): WallReading {
  const d = new Date(localMin * MINUTE_MS);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), weekday: d.getUTCDay() };
}

/** The instants (epoch ms, ascending) in (fromMs, toMs] at which the schedule fires under its DST policy. */
export function oracleOccurrences(s: OracleSchedule, fromMs: number, toMs: number): number[] {
  const fields: CronFields = parseCronFields(s.cron);
  const zone = s.timezone ?? 'UTC';
  const policy = s.dstPolicy ?? 'shift-first';
  const shiftGap = policy.startsWith('shift');
  const bothPasses = policy.endsWith('both');
  const out = new Set<number>();
  const seen = new Set<number>();
  let prev: number | undefined;
  for (let t = Math.floor((fromMs - LEAD_MS) / MINUTE_MS) * MINUTE_MS; t <= toMs; t += MINUTE_MS) {
    const local = localMinute(zone, t);
    if (prev !== undefined && local - prev > 1 && shiftGap && !fields.everyHour) {
      // The clock skipped readings prev+1 .. local-1: each one that matches shifts to this instant.
      for (let g = prev + 1; g < local; g++) if (matchesReading(fields, reading(g))) out.add(t);
    }
    if (matchesReading(fields, reading(local)) && (fields.everyHour || bothPasses || !seen.has(local))) out.add(t);
    seen.add(local);
    prev = local;
  }
  return [...out].filter((t) => t > fromMs && t <= toMs).sort((a, b) => a - b);
}

/**
 * What a correct materializer writes for one schedule whose progress mark is
 * `progressMs`, first reached by a node when the database read `firstTickDbMs`,
 * materializing up to `horizonMs`: occurrences before the first tick are
 * missed, and the catch-up policy keeps none, the newest one, or all of those
 * within `catchUpWindowMs` of that tick; later ones are written under every policy.
 */
export function oracleMaterialized(s: OracleSchedule, progressMs: number, firstTickDbMs: number, horizonMs: number, catchUpWindowMs: number): number[] {
  const all = oracleOccurrences(s, progressMs, horizonMs);
  const missed = all.filter((t) => t < firstTickDbMs && t > firstTickDbMs - catchUpWindowMs);
  const upcoming = all.filter((t) => t >= firstTickDbMs);
  const policy = s.catchUp ?? 'none';
  const kept = policy === 'all' ? missed : policy === 'latest' ? missed.slice(-1) : [];
  return [...kept, ...upcoming];
}

/** `cron:<id>:<UTC instant, ISO>`, the key form the checker reads (written here, not imported from the engine). */
export function oracleKey(id: string, instantMs: number): string {
  return `cron:${id}:${new Date(instantMs).toISOString()}`;
}
