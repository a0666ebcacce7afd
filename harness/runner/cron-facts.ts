import { parseCron } from '../../engine/cron/expression.ts';
import { occurrenceKey, occurrencesBetween } from '../../engine/cron/occurrences.ts';
import { DEFAULT_DST_POLICY } from '../../engine/cron/policy.ts';
import type { FaultAction } from '../faults/plan.ts';
import type { Scenario } from '../scenario.ts';

/** The materializer's default tolerance and lookahead as the fleet starts a node (harness/runner/fleet.ts). */
function lookaheadOf(s: Scenario, index: number): number {
  const n = s.scheduler.nodes[index];
  return n.lookaheadMs ?? Math.max(120_000, Math.abs(n.skewMs) * 2) + 500 + 10_000;
}

function keysBetween(s: Scenario, fromMs: number, toMs: number): string[] {
  if (toMs <= fromMs) return [];
  return s.scheduler.schedules.flatMap((sc) =>
    occurrencesBetween({ spec: parseCron(sc.cron), timezone: sc.timezone ?? 'UTC', dstPolicy: sc.dstPolicy ?? DEFAULT_DST_POLICY }, fromMs, toMs).map((t) =>
      occurrenceKey(sc.id, t),
    ),
  );
}

/**
 * The occurrence keys a scenario's schedules must have produced while the
 * load ran, by the database clock: from one minute after the start (a
 * schedule added at the start begins after it) to the end. The checker fails
 * a run where one is missing or appears twice.
 *
 * With a `dst` fault the node lives on a real DST night instead (see the dst
 * injector): the schedules' progress is rewound to `setClockTo -
 * catchUpWindowMs`, and the node materializes up to its clock plus its
 * lookahead until it stops, so the expected keys are the occurrences, under
 * each schedule's own DST policy, of (setClockTo - catchUpWindow,
 * setClockTo + time the node ran after the move + lookahead]. A DST scenario
 * picks schedules with no occurrence near either edge (they fire on the
 * transition's date only), so the real time the run took cannot move them.
 */
export function expectedCronKeys(s: Scenario, fromDbMs: number, toDbMs: number, faults: readonly FaultAction[] = []): string[] {
  const moved = faults.find((a) => a.fault === 'dst' && a.dst && a.targets.some((t) => t.role === 'scheduler'));
  if (moved?.dst) {
    const index = moved.targets.find((t) => t.role === 'scheduler')!.index;
    const ranMs = Math.max(0, toDbMs - fromDbMs - moved.atMs);
    const from = moved.dst.setClockToMs - (s.scheduler.nodes[index].catchUpWindowMs ?? 0);
    return keysBetween(s, from, moved.dst.setClockToMs + ranMs + lookaheadOf(s, index));
  }
  if (toDbMs <= fromDbMs) return [];
  return keysBetween(s, fromDbMs + 60_000, toDbMs);
}
