import { RESOLUTION_MS, wallTimesBetween, type CronSpec } from './expression.ts';
import { splitDstPolicy, type CatchUpPolicy, type DstPolicy } from './policy.ts';
import { gapEnd, instantsForWall, offsetRange } from './zone.ts';

/**
 * Which occurrences of a schedule fall in a window of instants, and which of
 * them to enqueue. Pure functions: no clock, no database. The materializer
 * feeds them the node's clock and the schedule's progress.
 */

export interface OccurrenceRule {
  spec: CronSpec;
  timezone: string;
  dstPolicy: DstPolicy;
}

/**
 * The instants one matching wall time stands for under the rule. Interval
 * schedules take every instant that reads the wall time (none in a gap, both
 * passes of an overlap): that is real elapsed time, "*\/5" stays 5 minutes
 * apart through both transitions. Wall-clock schedules apply the DST policy.
 */
export function instantsForOccurrence(rule: OccurrenceRule, wallMs: number): number[] {
  const instants = instantsForWall(rule.timezone, wallMs);
  if (rule.spec.interval) return instants;
  const { gap, overlap } = splitDstPolicy(rule.dstPolicy);
  if (instants.length === 0) return gap === 'shift' ? [gapEnd(rule.timezone, wallMs)] : [];
  if (instants.length > 1 && overlap === 'first') return [instants[0]];
  return instants;
}

/** An instant rounded down to the schedule resolution (a minute). */
export function bucket(instantMs: number): number {
  return Math.floor(instantMs / RESOLUTION_MS) * RESOLUTION_MS;
}

/**
 * Occurrence instants in (fromMs, toMs], ascending and distinct. Each wall
 * time maps to instants independently of the window, so consecutive windows
 * (a, b] and (b, c] yield exactly the occurrences of (a, c]: that is what
 * lets many nodes materialize in slices without coordination.
 */
export function occurrencesBetween(rule: OccurrenceRule, fromMs: number, toMs: number): number[] {
  if (toMs <= fromMs) return [];
  // Every instant t in (from, to] reads t + offset(t), which lies in (from + min, to + max].
  const [minOff, maxOff] = offsetRange(rule.timezone, fromMs, toMs);
  const found = new Set<number>();
  for (const wall of wallTimesBetween(rule.spec, fromMs + minOff, toMs + maxOff)) {
    for (const t of instantsForOccurrence(rule, wall)) {
      const b = bucket(t);
      if (b > fromMs && b <= toMs) found.add(b);
    }
  }
  return [...found].sort((a, b) => a - b);
}

/**
 * The deterministic key of one occurrence: schedule id and the UTC instant
 * bucketed to the minute. Two nodes that compute the same occurrence derive
 * the same key, and the unique index on jobs.idempotency_key keeps one row.
 */
export function occurrenceKey(scheduleId: string, instantMs: number): string {
  return `cron:${scheduleId}:${new Date(bucket(instantMs)).toISOString()}`;
}

export interface DueInput {
  /** Progress: every occurrence at or before this instant is already handled. */
  fromMs: number;
  /**
   * The database clock at this tick. An occurrence is missed when its instant
   * is already behind it: due-ness is the database's to decide, so a node
   * whose own clock jumped ahead does not declare future occurrences missed.
   */
  dbNowMs: number;
  /** Materialize up to here: the node clock plus the lookahead. */
  horizonMs: number;
  catchUp: CatchUpPolicy;
  /** `all` and `latest` reach back at most this far behind `dbNowMs`. */
  catchUpWindowMs: number;
}

export interface DuePlan {
  /** Instants to enqueue, ascending. */
  enqueue: number[];
  /** Missed instants the catch-up policy declined (within the enumerated window). */
  dropped: number[];
  /** The new progress mark: the horizon, or `fromMs` when the horizon is not ahead of it. */
  untilMs: number;
}

/**
 * Which occurrences in (from, horizon] to enqueue under the catch-up policy.
 * Upcoming occurrences (at or after the database's now) are always enqueued;
 * missed ones follow the policy, bounded by the catch-up window. Enumeration
 * starts no earlier than the window, so a schedule idle for a year costs one
 * window, not a year of occurrences.
 */
export function dueOccurrences(rule: OccurrenceRule, input: DueInput): DuePlan {
  const { fromMs, dbNowMs, horizonMs, catchUp, catchUpWindowMs } = input;
  if (horizonMs <= fromMs) return { enqueue: [], dropped: [], untilMs: fromMs };
  const windowStart = dbNowMs - catchUpWindowMs;
  const all = occurrencesBetween(rule, Math.max(fromMs, Math.min(windowStart, horizonMs)), horizonMs);
  const missed = all.filter((t) => t < dbNowMs);
  const upcoming = all.filter((t) => t >= dbNowMs);
  const inWindow = missed.filter((t) => t > windowStart);
  const caught = catchUp === 'all' ? inWindow : catchUp === 'latest' ? inWindow.slice(-1) : [];
  const kept = new Set(caught);
  return {
    enqueue: [...caught, ...upcoming],
    dropped: missed.filter((t) => !kept.has(t)),
    untilMs: horizonMs,
  };
}
