import { dueOccurrences } from '../../engine/cron/occurrences.ts';
import type { DstPolicy } from '../../engine/cron/policy.ts';
import type { Mutant } from './types.ts';

/**
 * The gap half of a DST policy is read as `shift` whatever it says (as when
 * a refactor of the policy's parsing defaults the gap), so `skip-first` and
 * `skip-both` schedules run a wall time the spring-forward night does not
 * have, at the end of the gap: the "my 02:30 job ran at 03:00 though I asked
 * to skip it" bug. Interval schedules and the overlap half are untouched.
 */
export const dstSkipAsShift: Mutant = {
  breaks: 'skip-first and skip-both run a nonexistent spring-forward wall time shifted to the end of the gap, as shift-* does',
  caughtBy: 'one-job-per-cron-occurrence',
  scenario: 'dst-spring-forward',
  runsIn: 'scheduler',
  changes: [
    {
      kind: 'cron-strategy',
      strategy: 'dueOccurrences',
      use: (rule, input) => dueOccurrences({ ...rule, dstPolicy: rule.dstPolicy.replace(/^skip-/, 'shift-') as DstPolicy }, input),
    },
  ],
};
