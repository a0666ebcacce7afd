import { defineScenario } from '../harness/scenario.ts';
import { BACKGROUND_TRAFFIC, SCHEDULED_JOB } from './background.ts';

const ny = { timezone: 'America/New_York', queue: 'default', catchUp: 'all' as const, payload: SCHEDULED_JOB };

/**
 * The night New York springs forward (2025-03-09, 02:00 EST becomes 03:00
 * EDT at 07:00 UTC): 02:30 does not exist. A scheduler node is moved to 5 s
 * before the transition (its clock and its reading of the database clock
 * together, so its skew stays real; see the dst injector) with the schedules'
 * progress 4 h before it (every scheduler down that long; the catch-up
 * window is 2.5 h), so the real materializer catches up the hours
 * before the move and materializes the rest through its lookahead, crossing
 * the transition. What it writes must be exactly the list below, written by
 * hand from the policy table in docs/cron-dst.md, not computed by the engine:
 *
 *   nightly-shift  30 2 (shift-first)   02:30 is in the gap -> 03:00 EDT = 07:00Z
 *   shift-both     30 2 (shift-both)    the same: 07:00Z
 *   nightly-skip   30 2 (skip-first)    02:30 is in the gap -> nothing
 *   skip-both      30 2 (skip-both)     nothing
 *   around         30 1,3               01:30 EST = 06:30Z, 03:30 EDT = 07:30Z
 *   every-30       *\/30 (interval)     real elapsed time: 05:00Z ... 07:30Z every 30 min
 *                                       (00:00 to 03:30 local, no 02:xx)
 *   catch-up-latest 10,40 (latest)      missed before the move: 05:10 ... 06:40Z; the newest,
 *                                       06:40Z, then 07:10Z and 07:40Z (03:10, 03:40 EDT)
 *   catch-up-none  10,40 (none)         none of the missed: 07:10Z and 07:40Z
 *   catch-up-window 15 * 8,9 (all)      every scheduler was down 4 h (progress 02:59:55Z), the
 *                                       window is 2.5 h: 03:15Z and 04:15Z are older than it and
 *                                       must not run; 05:15Z, 06:15Z (missed, within) and 07:15Z
 *                                       (03:15 EDT) must (an interval schedule: no 02:15 that night)
 *   lord-howe      30 16,18 in Australia/Lord_Howe (UTC+11 then, a 30-minute-shift zone; all):
 *                                       16:30 LHDT = 05:30Z (missed, within), 18:30 = 07:30Z
 * (every-30 and around catch up with `all`.)
 */
export default defineScenario({
  name: 'dst-spring-forward',
  description:
    'A scheduler node crosses the real New York spring-forward (2025-03-09, 02:00 -> 03:00): 02:30 does not exist. shift-first runs it at 03:00, skip-first not at all, interval schedules keep real elapsed time, and nothing else runs (the US 2007 rule change and every "my 02:30 job did not run" postmortem).',
  seed: 41,
  durationS: 14,
  load: { model: 'constant', rate: 50 },
  ...BACKGROUND_TRAFFIC,
  scheduler: {
    nodes: [{ skewMs: 0, lookaheadMs: 45 * 60_000, catchUpWindowMs: 150 * 60_000 }],
    schedules: [
      { id: 'nightly-shift', cron: '30 2 9 3 *', dstPolicy: 'shift-first', ...ny },
      { id: 'nightly-skip', cron: '30 2 9 3 *', dstPolicy: 'skip-first', ...ny },
      { id: 'shift-both', cron: '30 2 9 3 *', dstPolicy: 'shift-both', ...ny },
      { id: 'skip-both', cron: '30 2 9 3 *', dstPolicy: 'skip-both', ...ny },
      { id: 'catch-up-latest', cron: '10,40 * 9 3 *', ...ny, catchUp: 'latest' },
      { id: 'catch-up-none', cron: '10,40 * 9 3 *', ...ny, catchUp: 'none' },
      { id: 'around', cron: '30 1,3 9 3 *', ...ny },
      { id: 'every-30', cron: '*/30 * 9 3 *', ...ny },
      { id: 'catch-up-window', cron: '15 * 8,9 3 *', ...ny },
      { id: 'lord-howe', cron: '30 16,18 9 3 *', ...ny, timezone: 'Australia/Lord_Howe' },
    ],
  },
  faults: [{ fault: 'dst', atS: 2, target: 'scheduler:0', zone: 'America/New_York', transition: 'spring-forward', year: 2025, leadS: 5, downS: 4 * 3_600 }],
  checkers: {
    'one-job-per-cron-occurrence': {
      expectedKeys: [
        'cron:nightly-shift:2025-03-09T07:00:00.000Z',
        'cron:shift-both:2025-03-09T07:00:00.000Z',
        'cron:catch-up-latest:2025-03-09T06:40:00.000Z',
        'cron:catch-up-latest:2025-03-09T07:10:00.000Z',
        'cron:catch-up-latest:2025-03-09T07:40:00.000Z',
        'cron:catch-up-none:2025-03-09T07:10:00.000Z',
        'cron:catch-up-none:2025-03-09T07:40:00.000Z',
        'cron:around:2025-03-09T06:30:00.000Z',
        'cron:around:2025-03-09T07:30:00.000Z',
        'cron:every-30:2025-03-09T05:00:00.000Z',
        'cron:every-30:2025-03-09T05:30:00.000Z',
        'cron:every-30:2025-03-09T06:00:00.000Z',
        'cron:every-30:2025-03-09T06:30:00.000Z',
        'cron:every-30:2025-03-09T07:00:00.000Z',
        'cron:every-30:2025-03-09T07:30:00.000Z',
        'cron:catch-up-window:2025-03-09T05:15:00.000Z',
        'cron:catch-up-window:2025-03-09T06:15:00.000Z',
        'cron:catch-up-window:2025-03-09T07:15:00.000Z',
        'cron:lord-howe:2025-03-09T05:30:00.000Z',
        'cron:lord-howe:2025-03-09T07:30:00.000Z',
      ],
    },
    // The moved node's skew stays real: it must never refuse.
    'cron-skew-refusal': { mustRefuse: [] },
  },
  drainTimeoutS: 30,
});
