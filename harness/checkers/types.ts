import type { EventOf, FinalState, HistoryEvent, InvariantResult } from '../history.ts';

/**
 * An invariant checker: a pure function of the recorded history, the final
 * database state and the bounds the scenario holds it to. It never reads a
 * clock, a database or a file, so a stored run can be checked again.
 */
export type Checker<B> = (history: readonly HistoryEvent[], final: FinalState, bounds: B) => InvariantResult;

/** The kind of each bound a checker accepts, so a scenario's bounds can be validated without running anything. */
export type BoundKind = 'number' | 'string' | 'string[]' | 'boolean' | 'window';

/** A checker with the bounds it accepts and their defaults (a missing default means "optional, no default"). */
export interface CheckerDef<B> {
  name: string;
  /** One line: what the invariant says. Printed by `--list` and in reports. */
  says: string;
  check: Checker<B>;
  bounds: { [K in keyof B]-?: BoundKind };
  defaults: B;
}

/** A window of run time in ms since the run started, e.g. a declared incident. */
export interface WindowMs {
  fromMs: number;
  toMs: number;
}

/** "12,345": figures are read by people, so thousands are grouped. */
export function fmt(n: number, digits = 0): string {
  if (!Number.isFinite(n)) return String(n);
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

/** Nearest-rank percentile of `values` (p in 0..100); NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Largest of `values` (NaN for none), without spreading: a long run has more claims than a call can take arguments. */
export function maxOf(values: Iterable<number>): number {
  let m = Number.NaN;
  for (const v of values) if (!(v <= m)) m = v;
  return m;
}

/** Smallest of `values` (NaN for none). */
export function minOf(values: Iterable<number>): number {
  let m = Number.NaN;
  for (const v of values) if (!(v >= m)) m = v;
  return m;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** At most `n` examples: a report shows a few concrete cases, not thousands. */
export function firstN<T>(items: readonly T[], n = 5): T[] {
  return items.slice(0, n);
}

/**
 * Time of an event for ordering across processes: the database's clock when
 * both events carry it (it is the one clock every node shares), else the
 * harness's `t`. Ties keep history order.
 */
export function eventTime(e: HistoryEvent, other?: HistoryEvent): number {
  if (other && e.dbTime !== undefined && other.dbTime !== undefined) return e.dbTime;
  return e.t;
}

/** True when `a` happened before `b`, by the shared clock if both have it, else by harness time, else by index. */
export function happenedBefore(a: HistoryEvent, ai: number, b: HistoryEvent, bi: number): boolean {
  const ta = eventTime(a, b);
  const tb = eventTime(b, a);
  return ta < tb || (ta === tb && ai < bi);
}

/** The run's `otel:absent` (a scenario with `otel` on an installation without the OpenTelemetry SDK), if any. */
export function otelAbsent(history: readonly HistoryEvent[]): EventOf<'otel:absent'> | undefined {
  return history.find((e): e is EventOf<'otel:absent'> => e.type === 'otel:absent');
}

/** An OpenTelemetry check with nothing to judge because the SDK was not installed here: inconclusive, saying what to install. */
export function otelNotHere(base: Omit<InvariantResult, 'pass'>, absent: EventOf<'otel:absent'>): InvariantResult {
  return { ...base, pass: 'unknown', figure: `no OpenTelemetry SDK here (${absent.missing.join(', ')}), nothing to judge; install it: ${absent.install}`, notHere: absent.install };
}
