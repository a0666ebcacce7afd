import { ValidationError } from '../../engine/errors.ts';
import { offsetAt } from '../../engine/cron/zone.ts';

export type DstTransitionKind = 'spring-forward' | 'fall-back';

export interface DstTransition {
  zone: string;
  kind: DstTransitionKind;
  /** The first instant (epoch ms) on the new offset. */
  atMs: number;
  offsetBeforeMs: number;
  offsetAfterMs: number;
}

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

/**
 * The first `kind` transition of `zone` in `year` (UTC), from the platform's
 * IANA database: spring-forward is an offset that grows (clocks skip ahead),
 * fall-back one that shrinks (an hour, or Lord Howe's half hour, repeats).
 * Scans the year hour by hour, then narrows to the minute. Pure: the same
 * zone and year always give the same instant.
 */
export function findDstTransition(zone: string, year: number, kind: DstTransitionKind, field = 'zone'): DstTransition {
  const start = Date.UTC(year, 0, 1);
  const end = Date.UTC(year + 1, 0, 1);
  let prev = offsetAt(zone, start);
  for (let t = start + HOUR_MS; t <= end; t += HOUR_MS) {
    const off = offsetAt(zone, t);
    if (off !== prev && (off > prev) === (kind === 'spring-forward')) {
      let lo = t - HOUR_MS; // on the old offset
      let hi = t; // on the new offset
      while (hi - lo > MINUTE_MS) {
        const mid = lo + Math.max(MINUTE_MS, Math.floor((hi - lo) / 2 / MINUTE_MS) * MINUTE_MS);
        if (offsetAt(zone, mid) === prev) lo = mid;
        else hi = mid;
      }
      return { zone, kind, atMs: hi, offsetBeforeMs: prev, offsetAfterMs: off };
    }
    prev = off;
  }
  throw new ValidationError(field, `"${zone}" has no ${kind} transition in ${year}; pick a zone that observes daylight saving time (e.g. "America/New_York")`);
}
