import { ValidationError } from '../engine/errors.ts';

/**
 * The engine's background components a scenario runs beside its workers,
 * each as the CLI runs it, in its own process: outbox relays
 * (`stampede relay`, which also prunes with `--retention-ms`) and an
 * archiver (`stampede archiver`). Names follow the CLI flags; units in names.
 */
export interface RelaySettings {
  /** Relay processes racing for the outbox (SKIP LOCKED). */
  processes: number;
  leaseMs: number;
  pollMs: number;
  deliveryTimeoutMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  /** The pruner's retention (`--retention-ms`) in every relay; null runs no pruner. */
  retentionMs: number | null;
  pruneIntervalMs: number;
}

export interface ArchiverSettings {
  /** `--archive-after-ms`: a done job this old moves to stampede.job_history. */
  archiveAfterMs: number;
  intervalMs: number;
}

const show = (v: unknown) => (typeof v === 'string' ? `"${v}"` : JSON.stringify(v));
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function positiveInts(o: Record<string, unknown>, keys: readonly string[], field: string): void {
  for (const key of Object.keys(o)) {
    if (!keys.includes(key)) throw new ValidationError(`${field}.${key}`, `is not a setting here; expected one of ${keys.join(', ')}`);
  }
  for (const key of keys) {
    const v = o[key];
    if (v === null && key === 'retentionMs') continue;
    if (!Number.isInteger(v) || (v as number) < 1) throw new ValidationError(`${field}.${key}`, `expected an integer >= 1, got ${show(v)}`);
  }
}

/** Checks `scenario.relays` and `scenario.archiver`; throws ValidationError naming the field. */
export function validateComponents(
  s: { relays: RelaySettings | null; archiver: ArchiverSettings | null; mix: readonly { kind: string }[] },
  field: (path: string) => string,
): void {
  if (s.relays === null && s.mix.some((m) => m.kind === 'outbox')) {
    throw new ValidationError(field('relays'), 'is null, but the mix has outbox jobs; expected { processes, leaseMs, ... } to deliver their intents');
  }
  if (s.relays !== null) {
    if (!isObject(s.relays)) throw new ValidationError(field('relays'), `expected null or { processes, leaseMs, ... }, got ${show(s.relays)}`);
    positiveInts(s.relays, ['processes', 'leaseMs', 'pollMs', 'deliveryTimeoutMs', 'backoffBaseMs', 'backoffCapMs', 'retentionMs', 'pruneIntervalMs'], field('relays'));
    if (s.relays.deliveryTimeoutMs >= s.relays.leaseMs) {
      throw new ValidationError(field('relays.deliveryTimeoutMs'), `expected below leaseMs (${s.relays.leaseMs}), got ${s.relays.deliveryTimeoutMs}`);
    }
  }
  if (s.archiver !== null) {
    if (!isObject(s.archiver)) throw new ValidationError(field('archiver'), `expected null or { archiveAfterMs, intervalMs }, got ${show(s.archiver)}`);
    positiveInts(s.archiver, ['archiveAfterMs', 'intervalMs'], field('archiver'));
  }
}
