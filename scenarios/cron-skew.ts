import { defineScenario } from '../harness/scenario.ts';
import { BACKGROUND_TRAFFIC, SCHEDULED_JOB } from './background.ts';

/**
 * Several scheduler nodes with skewed clocks, as in any fleet where NTP is
 * late on one host: each computes the same occurrences from its own clock,
 * and the occurrence's idempotency key must collapse them onto one job. One
 * node's skew is stepped 90 s ahead mid-run (it materializes further ahead,
 * onto the same keys); another is stepped 150 s back, past the tolerance, and
 * must refuse to materialize rather than write what it believes is due.
 * Twice the schedules' progress mark is rewound 30 s (a restored backup),
 * so occurrences already written are computed and written again.
 */
export default defineScenario({
  name: 'cron-skew',
  description:
    'Three scheduler nodes with skewed clocks (-20 s, 0, +25 s), one stepped 90 s ahead and one 150 s back mid-run (NTP late or stepped on one host), progress rewound twice (a restored backup): every occurrence becomes exactly one job, and the node beyond the skew tolerance refuses instead of materializing.',
  seed: 31,
  durationS: 14,
  load: { model: 'poisson', rate: 100 },
  ...BACKGROUND_TRAFFIC,
  scheduler: {
    nodes: [{ skewMs: -20_000 }, { skewMs: 0 }, { skewMs: 25_000 }],
    schedules: [
      { id: 'minutely', cron: '* * * * *', queue: 'default', catchUp: 'latest', payload: SCHEDULED_JOB },
      { id: 'rollup', cron: '*/2 * * * *', queue: 'default', catchUp: 'all', payload: SCHEDULED_JOB },
      { id: 'berlin-minutely', cron: '* * * * *', timezone: 'Europe/Berlin', queue: 'default', payload: SCHEDULED_JOB },
      // More occurrences for three nodes to compute at once: a 14 s run sees about one of each minutely
      // schedule, and the promise (one job per occurrence, however many nodes) is judged per occurrence.
      // Zones with half- and quarter-hour offsets spell the same minute differently on the wall.
      ...['Asia/Kolkata', 'America/St_Johns', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/Los_Angeles'].map((timezone, i) => ({
        id: `minutely-${i + 1}`,
        cron: '* * * * *',
        timezone,
        queue: 'default',
        payload: SCHEDULED_JOB,
      })),
    ],
  },
  faults: [
    { fault: 'clock-skew', atS: 4, target: 'scheduler:1', skewMs: 90_000 },
    { fault: 'clock-jump', atS: 7, target: 'scheduler:0', jumpMs: -150_000 },
    // Twice, a stale progress mark (a restored backup): every node computes the last 30 s and the
    // lookahead again, so the unique occurrence key really has double computes to collapse.
    { fault: 'cron-rewind', atS: 5, everyS: 5, backS: 30 },
  ],
  // The expected occurrences come from the harness's cron oracle over the run's real times (at least the
  // next minute of both minutely schedules at 14 s); scheduler-0, stepped 170 s behind, must refuse.
  checkers: { 'one-job-per-cron-occurrence': true, 'cron-skew-refusal': { mustRefuse: ['scheduler-0'] } },
  drainTimeoutS: 30,
});
