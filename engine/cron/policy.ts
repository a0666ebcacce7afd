import { ValidationError } from '../errors.ts';

/**
 * What a wall-clock time means on the two DST nights, as `<gap>-<overlap>`:
 *
 *   gap (spring forward, 02:30 does not exist):
 *     shift  run at the first instant after the gap (the transition, 03:00 new time)
 *     skip   do not run that day
 *   overlap (fall back, 01:30 happens twice):
 *     first  run once, at the first pass (daylight time)
 *     both   run at both passes
 *
 * Only wall-clock schedules (a restricted hour field, "30 2 * * *") are
 * subject to it. Interval schedules (hour field `*`, e.g. "*\/5 * * * *")
 * follow real elapsed time whatever the policy; see docs/cron-dst.md.
 */
export const DST_POLICIES = ['shift-first', 'shift-both', 'skip-first', 'skip-both'] as const;
export type DstPolicy = (typeof DST_POLICIES)[number];

/**
 * What happens to occurrences nobody materialized before they were due
 * (every node down, or a forward clock jump):
 *   all     enqueue every missed occurrence within the catch-up window
 *   latest  enqueue only the newest missed occurrence within the window
 *   none    enqueue none of them (the default: see the README, "Recurring schedules and DST")
 */
export const CATCH_UP_POLICIES = ['all', 'latest', 'none'] as const;
export type CatchUpPolicy = (typeof CATCH_UP_POLICIES)[number];

export const DEFAULT_DST_POLICY: DstPolicy = 'shift-first';
export const DEFAULT_CATCH_UP: CatchUpPolicy = 'none';

export function validateDstPolicy(value: unknown, field = 'dstPolicy'): DstPolicy {
  if (typeof value === 'string' && (DST_POLICIES as readonly string[]).includes(value)) return value as DstPolicy;
  throw new ValidationError(field, `${JSON.stringify(value)} is not a DST policy; expected one of ${DST_POLICIES.join(', ')}`);
}

export function validateCatchUp(value: unknown, field = 'catchUp'): CatchUpPolicy {
  if (typeof value === 'string' && (CATCH_UP_POLICIES as readonly string[]).includes(value)) return value as CatchUpPolicy;
  throw new ValidationError(
    field,
    `${JSON.stringify(value)} is not a catch-up policy; expected one of ${CATCH_UP_POLICIES.join(', ')}`,
  );
}

/** The two halves of a DST policy. */
export function splitDstPolicy(policy: DstPolicy): { gap: 'shift' | 'skip'; overlap: 'first' | 'both' } {
  const [gap, overlap] = policy.split('-') as ['shift' | 'skip', 'first' | 'both'];
  return { gap, overlap };
}
