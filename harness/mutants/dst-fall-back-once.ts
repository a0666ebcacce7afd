import { dueOccurrences } from '../../engine/cron/occurrences.ts';
import type { DstPolicy } from '../../engine/cron/policy.ts';
import type { Mutant } from './types.ts';

/**
 * The overlap half of a DST policy is read as `first` whatever it says (as
 * when a refactor keeps only the first instant of a repeated wall time), so
 * `shift-both` and `skip-both` schedules fire only the first pass of a
 * fall-back night's repeated hour: the second 01:30 the user asked for never
 * runs. Interval schedules and the gap half are untouched.
 */
export const dstFallBackOnce: Mutant = {
  breaks: "shift-both and skip-both fire only the first pass of a fall-back night's repeated wall time, not both",
  caughtBy: 'one-job-per-cron-occurrence',
  scenario: 'dst-fall-back',
  runsIn: 'scheduler',
  changes: [
    {
      kind: 'cron-strategy',
      strategy: 'dueOccurrences',
      use: (rule, input) => dueOccurrences({ ...rule, dstPolicy: rule.dstPolicy.replace(/-both$/, '-first') as DstPolicy }, input),
    },
  ],
};
