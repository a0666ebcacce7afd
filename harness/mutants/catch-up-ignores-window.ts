import { dueOccurrences } from '../../engine/cron/occurrences.ts';
import type { Mutant } from './types.ts';

/**
 * The catch-up window is not applied (as when a refactor drops the bound
 * from the enumeration and the filter together): after an outage longer than
 * `catchUpWindowMs`, an `all` schedule enqueues every missed occurrence back
 * to its progress mark, however old, all due at once; the herd the window
 * exists to bound.
 */
export const catchUpIgnoresWindow: Mutant = {
  breaks: 'catch-up all enqueues missed occurrences older than catchUpWindowMs, back to the progress mark',
  caughtBy: 'one-job-per-cron-occurrence',
  scenario: 'dst-spring-forward',
  runsIn: 'scheduler',
  changes: [
    {
      kind: 'cron-strategy',
      strategy: 'dueOccurrences',
      use: (rule, input) => dueOccurrences(rule, { ...input, catchUpWindowMs: Number.POSITIVE_INFINITY }),
    },
  ],
};
