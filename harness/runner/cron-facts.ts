import { parseCron } from '../../engine/cron/expression.ts';
import { occurrenceKey, occurrencesBetween } from '../../engine/cron/occurrences.ts';
import { DEFAULT_DST_POLICY } from '../../engine/cron/policy.ts';
import type { Scenario } from '../scenario.ts';

/**
 * The occurrence keys a scenario's schedules must have produced while the
 * load ran, by the database clock: from one minute after the start (a
 * schedule added at the start begins after it) to the end. The checker fails
 * a run where one is missing or appears twice.
 */
export function expectedCronKeys(s: Scenario, fromDbMs: number, toDbMs: number): string[] {
  if (toDbMs <= fromDbMs) return [];
  return s.scheduler.schedules.flatMap((sc) =>
    occurrencesBetween(
      { spec: parseCron(sc.cron), timezone: sc.timezone ?? 'UTC', dstPolicy: sc.dstPolicy ?? DEFAULT_DST_POLICY },
      fromDbMs + 60_000,
      toDbMs,
    ).map((t) => occurrenceKey(sc.id, t)),
  );
}
