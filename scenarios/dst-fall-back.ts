import { defineScenario } from '../harness/scenario.ts';
import { BACKGROUND_TRAFFIC, SCHEDULED_JOB } from './background.ts';

const london = { timezone: 'Europe/London', queue: 'default', catchUp: 'all' as const, payload: SCHEDULED_JOB };

/**
 * The night London falls back (2025-10-26, 02:00 BST becomes 01:00 GMT at
 * 01:00 UTC): 01:30 happens twice. A scheduler node is moved to 5 s before
 * the transition (clock and database reading together; see the dst
 * injector), progress 2.5 h before it, and crosses it. Expected, by hand from
 * docs/cron-dst.md:
 *
 *   nightly-first  30 1 (shift-first)   first pass only: 01:30 BST = 00:30Z
 *   nightly-both   30 1 (shift-both)    both passes: 00:30Z and 01:30 GMT = 01:30Z
 *   skip-first     30 1 (skip-first)    first pass only: 00:30Z
 *   skip-both      30 1 (skip-both)     both passes: 00:30Z and 01:30Z
 *   every-30       *\/30 (interval)     real elapsed time: 23:00Z (25th) ... 01:30Z,
 *                                       six runs, 01:00 and 01:30 local twice each
 *   catch-up-latest 10,40 (latest)      missed before the move: 23:10Z (25th) ... 00:40Z (01:40
 *                                       BST); the newest, 00:40Z, then 01:10Z and 01:40Z (GMT)
 *   catch-up-none  10,40 (none)         none of the missed: 01:10Z and 01:40Z
 *   berlin-first   30 2 in Europe/Berlin (skip-first): Berlin falls back at the same instant
 *                                       (03:00 CEST -> 02:00 CET): first pass only, 02:30 CEST = 00:30Z
 *   berlin-both    30 2 in Europe/Berlin (skip-both): 00:30Z and 02:30 CET = 01:30Z
 * (every-30 and the nightly ones catch up with `all`.)
 */
export default defineScenario({
  name: 'dst-fall-back',
  description:
    'A scheduler node crosses the real London fall-back (2025-10-26, 02:00 -> 01:00): 01:30 happens twice. shift-first runs once, shift-both twice, interval schedules keep real elapsed time; no double billing run nobody asked for.',
  seed: 43,
  durationS: 14,
  load: { model: 'constant', rate: 50 },
  ...BACKGROUND_TRAFFIC,
  scheduler: {
    nodes: [{ skewMs: 0, lookaheadMs: 45 * 60_000, catchUpWindowMs: 150 * 60_000 }],
    schedules: [
      { id: 'nightly-first', cron: '30 1 26 10 *', dstPolicy: 'shift-first', ...london },
      { id: 'nightly-both', cron: '30 1 26 10 *', dstPolicy: 'shift-both', ...london },
      { id: 'skip-first', cron: '30 1 26 10 *', dstPolicy: 'skip-first', ...london },
      { id: 'skip-both', cron: '30 1 26 10 *', dstPolicy: 'skip-both', ...london },
      { id: 'catch-up-latest', cron: '10,40 * 26 10 *', ...london, catchUp: 'latest' },
      { id: 'catch-up-none', cron: '10,40 * 26 10 *', ...london, catchUp: 'none' },
      { id: 'every-30', cron: '*/30 * 26 10 *', ...london },
      { id: 'berlin-first', cron: '30 2 26 10 *', dstPolicy: 'skip-first', ...london, timezone: 'Europe/Berlin' },
      { id: 'berlin-both', cron: '30 2 26 10 *', dstPolicy: 'skip-both', ...london, timezone: 'Europe/Berlin' },
    ],
  },
  faults: [{ fault: 'dst', atS: 2, target: 'scheduler:0', zone: 'Europe/London', transition: 'fall-back', year: 2025, leadS: 5 }],
  checkers: {
    'one-job-per-cron-occurrence': {
      expectedKeys: [
        'cron:nightly-first:2025-10-26T00:30:00.000Z',
        'cron:nightly-both:2025-10-26T00:30:00.000Z',
        'cron:nightly-both:2025-10-26T01:30:00.000Z',
        'cron:skip-first:2025-10-26T00:30:00.000Z',
        'cron:skip-both:2025-10-26T00:30:00.000Z',
        'cron:skip-both:2025-10-26T01:30:00.000Z',
        'cron:catch-up-latest:2025-10-26T00:40:00.000Z',
        'cron:catch-up-latest:2025-10-26T01:10:00.000Z',
        'cron:catch-up-latest:2025-10-26T01:40:00.000Z',
        'cron:catch-up-none:2025-10-26T01:10:00.000Z',
        'cron:catch-up-none:2025-10-26T01:40:00.000Z',
        'cron:every-30:2025-10-25T23:00:00.000Z',
        'cron:every-30:2025-10-25T23:30:00.000Z',
        'cron:every-30:2025-10-26T00:00:00.000Z',
        'cron:every-30:2025-10-26T00:30:00.000Z',
        'cron:every-30:2025-10-26T01:00:00.000Z',
        'cron:every-30:2025-10-26T01:30:00.000Z',
        'cron:berlin-first:2025-10-26T00:30:00.000Z',
        'cron:berlin-both:2025-10-26T00:30:00.000Z',
        'cron:berlin-both:2025-10-26T01:30:00.000Z',
      ],
    },
    // The moved node's skew stays real: it must never refuse.
    'cron-skew-refusal': { mustRefuse: [] },
  },
  drainTimeoutS: 30,
});
