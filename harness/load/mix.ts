import { ValidationError } from '../../engine/errors.ts';
import type { Rng } from '../../engine/rng.ts';
import { validateQueueName } from '../../engine/validate.ts';
import type { JobKind } from '../history.ts';
import type { DurationDist, JobParams, Lane, MixEntry } from './types.ts';

export const JOB_KINDS: readonly JobKind[] = ['normal', 'poison', 'slow', 'flaky', 'effect', 'downstream', 'failing', 'outbox'];
const DEFAULT_DURATION: DurationDist = { dist: 'fixed', ms: 10 };

/** The least `payloadBytes` a mix entry may ask for: above any unpadded payload of the generator. */
export const MIN_PADDED_BYTES = 1_024;

/**
 * `payload` with a `pad` field that makes its JSON exactly `bytes` bytes of UTF-8: two-byte characters (é), and
 * one ASCII character when the remainder is odd. Throws when the unpadded payload is already longer.
 */
export function padPayload(payload: Record<string, unknown>, bytes: number): Record<string, unknown> {
  const room = bytes - Buffer.byteLength(JSON.stringify({ ...payload, pad: '' }), 'utf8');
  if (room < 0) throw new Error(`payloadBytes ${bytes}: the payload is already ${bytes - room} bytes unpadded`);
  return { ...payload, pad: 'é'.repeat(Math.floor(room / 2)) + 'x'.repeat(room % 2) };
}

/** Index into `weights` drawn in proportion to them. */
export function weightedPick(weights: readonly number[], rng: Rng): number {
  const total = weights.reduce((a, b) => a + b, 0);
  let x = rng.next() * total;
  for (let i = 0; i < weights.length; i++) {
    x -= weights[i];
    if (x < 0) return i;
  }
  return weights.length - 1;
}

/** One standard normal draw (Box-Muller), from the seeded Rng. */
function normal(rng: Rng): number {
  const u = 1 - rng.next(); // (0, 1]: log(0) would be -Infinity
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}

/** z of the 99th percentile of the standard normal. */
const Z99 = 2.3263;

export function sampleDuration(d: DurationDist, rng: Rng): number {
  switch (d.dist) {
    case 'fixed':
      return d.ms;
    case 'uniform':
      return Math.round(d.minMs + rng.next() * (d.maxMs - d.minMs));
    case 'exponential':
      return Math.round(Math.min(d.maxMs ?? Number.POSITIVE_INFINITY, -Math.log(1 - rng.next()) * d.meanMs));
    case 'lognormal': {
      const sigma = Math.log(d.p99Ms / d.medianMs) / Z99;
      return Math.round(Math.exp(Math.log(d.medianMs) + sigma * normal(rng)));
    }
  }
}

export function jobParams(entry: MixEntry, rng: Rng): JobParams {
  const params: JobParams = { durationMs: sampleDuration(entry.durationMs ?? DEFAULT_DURATION, rng) };
  if (entry.kind === 'flaky') params.failAttempts = entry.failAttempts ?? 2;
  if (entry.delayMs) params.delayMs = entry.delayMs;
  return params;
}

const isNum = (v: unknown, min = 0): v is number => typeof v === 'number' && Number.isFinite(v) && v >= min;
const show = (v: unknown) => (typeof v === 'string' ? `"${v}"` : JSON.stringify(v));

function num(obj: Record<string, unknown>, key: string, field: string, what = 'a non-negative number', min = 0): void {
  if (!isNum(obj[key], min)) throw new ValidationError(`${field}.${key}`, `expected ${what}, got ${show(obj[key])}`);
}

function onlyKeys(o: Record<string, unknown>, keys: readonly string[], field: string): void {
  for (const k of Object.keys(o)) if (!keys.includes(k)) throw new ValidationError(`${field}.${k}`, `is not a field here; expected one of ${keys.join(', ')}`);
}

export function validateDuration(d: unknown, field: string): void {
  if (typeof d !== 'object' || d === null) throw new ValidationError(field, `expected a duration distribution such as { dist: 'fixed', ms: 10 }, got ${show(d)}`);
  const o = d as Record<string, unknown>;
  switch (o.dist) {
    case 'fixed':
      return num(o, 'ms', field);
    case 'uniform':
      num(o, 'minMs', field);
      num(o, 'maxMs', field);
      if ((o.maxMs as number) < (o.minMs as number)) throw new ValidationError(`${field}.maxMs`, `expected >= minMs (${o.minMs}), got ${o.maxMs}`);
      return;
    case 'exponential':
      num(o, 'meanMs', field, 'a positive number', Number.MIN_VALUE);
      if (o.maxMs !== undefined) num(o, 'maxMs', field);
      return;
    case 'lognormal':
      num(o, 'medianMs', field, 'a positive number', Number.MIN_VALUE);
      num(o, 'p99Ms', field, 'a positive number', Number.MIN_VALUE);
      if ((o.p99Ms as number) < (o.medianMs as number)) throw new ValidationError(`${field}.p99Ms`, `expected >= medianMs (${o.medianMs}), got ${o.p99Ms}`);
      return;
    default:
      throw new ValidationError(`${field}.dist`, `expected one of fixed, uniform, exponential, lognormal, got ${show(o.dist)}`);
  }
}

export function validateLanes(lanes: unknown, field: string): asserts lanes is Lane[] {
  if (!Array.isArray(lanes) || lanes.length === 0) throw new ValidationError(field, `expected a non-empty array of { queue, priority, share }, got ${show(lanes)}`);
  const seen = new Set<string>();
  lanes.forEach((lane, i) => {
    const f = `${field}[${i}]`;
    if (typeof lane !== 'object' || lane === null) throw new ValidationError(f, `expected { queue, priority, share }, got ${show(lane)}`);
    const l = lane as Record<string, unknown>;
    onlyKeys(l, ['queue', 'priority', 'share'], f);
    validateQueueName(l.queue, `${f}.queue`);
    if (seen.has(l.queue as string)) throw new ValidationError(`${f}.queue`, `"${l.queue}" appears twice; each lane is one queue`);
    seen.add(l.queue as string);
    if (!Number.isInteger(l.priority) || (l.priority as number) < 0 || (l.priority as number) > 9) {
      throw new ValidationError(`${f}.priority`, `expected an integer 0-9, got ${show(l.priority)}`);
    }
    num(l, 'share', f);
  });
  if (!lanes.some((l) => l.share > 0)) throw new ValidationError(field, 'expected at least one lane with a share above 0');
}

export function validateMix(mix: unknown, lanes: readonly Lane[], field: string): asserts mix is MixEntry[] {
  if (!Array.isArray(mix) || mix.length === 0) throw new ValidationError(field, `expected a non-empty array of { kind, share | count, ... }, got ${show(mix)}`);
  const queues = new Set(lanes.map((l) => l.queue));
  mix.forEach((entry, i) => {
    const f = `${field}[${i}]`;
    if (typeof entry !== 'object' || entry === null) throw new ValidationError(f, `expected { kind, share | count }, got ${show(entry)}`);
    const e = entry as Record<string, unknown>;
    onlyKeys(e, ['kind', 'share', 'count', 'durationMs', 'failAttempts', 'delayMs', 'lanes', 'payloadBytes'], f);
    if (!JOB_KINDS.includes(e.kind as JobKind)) throw new ValidationError(`${f}.kind`, `expected one of ${JOB_KINDS.join(', ')}, got ${show(e.kind)}`);
    if ((e.share === undefined) === (e.count === undefined)) throw new ValidationError(f, 'give share or count, exactly one of them');
    if (e.share !== undefined) num(e, 'share', f);
    if (e.count !== undefined && !(Number.isInteger(e.count) && (e.count as number) >= 0)) throw new ValidationError(`${f}.count`, `expected a non-negative integer, got ${show(e.count)}`);
    if (e.durationMs !== undefined) validateDuration(e.durationMs, `${f}.durationMs`);
    if (e.failAttempts !== undefined && !(Number.isInteger(e.failAttempts) && (e.failAttempts as number) >= 0)) {
      throw new ValidationError(`${f}.failAttempts`, `expected a non-negative integer, got ${show(e.failAttempts)}`);
    }
    if (e.delayMs !== undefined) num(e, 'delayMs', f);
    // Room for the unpadded payload ({"kind":…,"op":…,"params":…,"pad":""} is under 200 bytes).
    if (e.payloadBytes !== undefined && !(Number.isInteger(e.payloadBytes) && (e.payloadBytes as number) >= MIN_PADDED_BYTES)) {
      throw new ValidationError(`${f}.payloadBytes`, `expected an integer of at least ${MIN_PADDED_BYTES}, got ${show(e.payloadBytes)}`);
    }
    if (e.lanes !== undefined) {
      if (!Array.isArray(e.lanes) || e.lanes.length === 0) throw new ValidationError(`${f}.lanes`, `expected a non-empty array of lane queue names, got ${show(e.lanes)}`);
      e.lanes.forEach((q, j) => {
        if (!queues.has(q)) throw new ValidationError(`${f}.lanes[${j}]`, `"${q}" is not a lane; expected one of ${[...queues].join(', ')}`);
      });
    }
  });
  if (!mix.some((e) => e.share !== undefined && e.share > 0)) throw new ValidationError(field, 'expected at least one entry with a share above 0 (count entries replace share-based arrivals)');
}
