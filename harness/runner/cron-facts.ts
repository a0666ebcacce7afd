import type { FaultAction } from '../faults/plan.ts';
import type { HistoryEvent } from '../history.ts';
import { oracleKey, oracleMaterialized, oracleOccurrences, type OracleSchedule } from '../oracle/cron-walk.ts';
import { CRON } from '../../engine/cron/materializer.ts';
import { schedulerNodeOptions, type Scenario } from '../scenario.ts';

/** A node's lookahead as the fleet starts it (schedulerNodeOptions). */
const lookaheadOf = (s: Scenario, index: number): number => schedulerNodeOptions(s.scheduler.nodes[index]).lookaheadMs;

/** The engine's default catch-up window, for nodes that do not set one. */
const DEFAULT_CATCH_UP_WINDOW_MS = CRON.defaults.catchUpWindowMs;
/** Rows a healthy node has surely written ahead of the load's end: far below every node's lookahead (>= 130 s by default). */
const SURELY_AHEAD_MS = 60_000;
/** Anything on schedule up to this far past the end may exist (the furthest a node ahead writes). */
const MAY_AHEAD_MS = 3_600_000;
/** Either side of the first tick, whether an occurrence was missed or upcoming depends on milliseconds: allowed, not required. */
const EDGE_MS = 2_000;

export interface CronRunTimes {
  /** The database's time just after the schedules were added (their progress mark is at or before it). */
  schedulesAddedDbMs: number;
  /** The load's start and end, database clock, and the harness `t` of the start. */
  fromDbMs: number;
  toDbMs: number;
  fromT: number;
}

export interface CronExpectation {
  /** Each must exist exactly once. */
  expectedKeys: string[];
  /** May exist (at most once); anything neither expected nor allowed is unexpected. */
  allowedKeys: string[];
}

const keys = (sc: OracleSchedule, instants: number[]) => instants.map((t) => oracleKey(sc.id, t));

/**
 * The occurrence keys a run's schedules must (and may) have produced, from
 * the harness's own cron oracle (harness/oracle), never from engine/cron.
 *
 * Normal run: every occurrence after the first materialization (plus a
 * margin) up to a minute past the load's end must exist, since every policy
 * writes upcoming occurrences and every node's lookahead reaches past that;
 * any occurrence after the schedules were added (or after the earliest mark a
 * `cron-rewind` fault set) may exist (the edge around the first tick, rows
 * written further ahead, catch-up after a rewind). An occurrence before
 * that, or an instant off the schedule, is unexpected.
 *
 * With a `dst` fault the node lives on a real DST night (see the dst
 * injector): progress is rewound to `setClockTo - downS` (default: the
 * node's catchUpWindowMs), the first
 * tick after the rewind reads about `setClockTo + 1.5 s` and decides what was
 * missed, and the node materializes up to its clock plus its lookahead until
 * it stops. The catch-up and DST policies decide the exact list. A DST
 * scenario picks schedules with no occurrence near these edges.
 */
export function expectedCron(s: Scenario, history: readonly HistoryEvent[], times: CronRunTimes, faults: readonly FaultAction[] = []): CronExpectation {
  const schedules = s.scheduler.schedules as OracleSchedule[];
  const moved = faults.find((a) => a.fault === 'dst' && a.dst && a.targets.some((t) => t.role === 'scheduler'));
  if (moved?.dst) {
    const index = moved.targets.find((t) => t.role === 'scheduler')!.index;
    const ranMs = Math.max(0, times.toDbMs - times.fromDbMs - moved.atMs);
    const windowMs = s.scheduler.nodes[index].catchUpWindowMs ?? DEFAULT_CATCH_UP_WINDOW_MS;
    const at = moved.dst.setClockToMs;
    const horizon = at + ranMs + lookaheadOf(s, index);
    const exact = schedules.flatMap((sc) => keys(sc, oracleMaterialized(sc, at - (moved.dst!.downMs ?? windowMs), at + 1_500, horizon, windowMs)));
    return { expectedKeys: exact, allowedKeys: exact };
  }
  if (times.toDbMs <= times.fromDbMs || schedules.length === 0) return { expectedKeys: [], allowedKeys: [] };
  const first = history.find((e) => e.type === 'cron:materialized');
  const firstTickDb = first ? times.fromDbMs + (first.t - times.fromT) : times.toDbMs;
  // A cron-rewind fault moves progress back before the add, and catch-up may then write from there.
  const rewoundTo = faults.filter((a) => a.fault === 'cron-rewind').map((a) => times.fromDbMs + a.atMs - (a.params.backS as number) * 1000);
  const mayFrom = Math.min(times.schedulesAddedDbMs, ...rewoundTo) - EDGE_MS;
  const must = schedules.flatMap((sc) => keys(sc, oracleOccurrences(sc, firstTickDb + EDGE_MS, times.toDbMs + SURELY_AHEAD_MS)));
  const may = schedules.flatMap((sc) => keys(sc, oracleOccurrences(sc, mayFrom, times.toDbMs + MAY_AHEAD_MS)));
  return { expectedKeys: must, allowedKeys: may };
}
