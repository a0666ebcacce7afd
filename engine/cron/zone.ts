import { IANAZone } from 'luxon';
import { ValidationError } from '../errors.ts';

/**
 * Time zones, through luxon and the platform's IANA database (Intl); no
 * offsets are written down here. A "wall time" is a local clock reading
 * encoded as if it were UTC epoch ms (02:30 local on 2026-03-08 is
 * Date.UTC(2026, 2, 8, 2, 30)); an "instant" is real epoch ms.
 */

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** Checks an IANA zone name ("America/New_York", "UTC"); throws ValidationError naming `field`. */
export function validateTimeZone(value: unknown, field = 'timezone'): string {
  if (typeof value !== 'string' || value === '') {
    throw new ValidationError(field, 'expected an IANA time zone name such as "America/New_York" or "UTC"');
  }
  if (!IANAZone.isValidZone(value)) {
    throw new ValidationError(field, `"${value}" is not a known IANA time zone; expected a name such as "America/New_York" or "UTC"`);
  }
  return value;
}

const zones = new Map<string, IANAZone>();
function zone(name: string): IANAZone {
  let z = zones.get(name);
  if (!z) zones.set(name, (z = IANAZone.create(name)));
  return z;
}

/** The zone's UTC offset at `instantMs`, in ms (east positive). */
export function offsetAt(tz: string, instantMs: number): number {
  return zone(tz).offset(instantMs) * MINUTE_MS;
}

/** The local wall time that `instantMs` reads as in `tz`. */
export function wallOf(tz: string, instantMs: number): number {
  return instantMs + offsetAt(tz, instantMs);
}

/**
 * Every instant whose local reading in `tz` is exactly `wallMs`, ascending:
 * one on an ordinary day, none in a spring-forward gap, two in a fall-back
 * overlap. The true instant lies within 14 h of the wall time, so the
 * offsets in force 14 h either side are the only candidates (assuming, as
 * every zone in current use does, at most one transition in 28 h).
 */
export function instantsForWall(tz: string, wallMs: number): number[] {
  const candidates = new Set([offsetAt(tz, wallMs - 14 * HOUR_MS), offsetAt(tz, wallMs), offsetAt(tz, wallMs + 14 * HOUR_MS)]);
  const out: number[] = [];
  for (const off of candidates) {
    const t = wallMs - off;
    if (offsetAt(tz, t) === off) out.push(t);
  }
  return out.sort((a, b) => a - b);
}

/**
 * For a wall time inside a spring-forward gap: the transition instant, the
 * first instant after the gap (02:30 on the New York night → 03:00 EDT).
 * Binary search between the two candidate instants; transitions fall on whole
 * minutes, so the search runs on minutes.
 */
export function gapEnd(tz: string, wallMs: number): number {
  const before = offsetAt(tz, wallMs - 14 * HOUR_MS);
  const after = offsetAt(tz, wallMs + 14 * HOUR_MS);
  // Reading wallMs with the old offset lands after the transition; with the new one, before it.
  let lo = Math.floor((wallMs - after) / MINUTE_MS); // offset here is `before`
  let hi = Math.ceil((wallMs - before) / MINUTE_MS); // offset here is `after`
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(tz, mid * MINUTE_MS) === before) lo = mid;
    else hi = mid;
  }
  return hi * MINUTE_MS;
}

/**
 * The range of offsets the zone uses over [fromMs, toMs], sampled every 6 h
 * (DST transitions are months apart), as [min, max] in ms. Used to turn an
 * instant window into the wall-time window that covers it.
 */
export function offsetRange(tz: string, fromMs: number, toMs: number): [number, number] {
  let min = Infinity;
  let max = -Infinity;
  const step = 6 * HOUR_MS;
  for (let t = fromMs; ; t = Math.min(t + step, toMs)) {
    const off = offsetAt(tz, t);
    if (off < min) min = off;
    if (off > max) max = off;
    if (t >= toMs) break;
  }
  return [min, max];
}
