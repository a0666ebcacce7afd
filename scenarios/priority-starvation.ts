import { defineScenario } from '../harness/scenario.ts';

/**
 * The high-priority lane is saturated (more checkout work offered than the
 * workers can do) and a low-priority lane shares the same workers. Strict
 * priority starves the low lane for as long as the high lane stays backed up,
 * which under sustained overload is forever: the classic "nightly reports
 * never ran during the sale". Aging promotes a low job once it has waited
 * (9 - 0) x 300 ms longer than the high jobs ahead of it, so its wait is
 * bounded. The no-aging mutant is the control.
 */
export default defineScenario({
  name: 'priority-starvation',
  description:
    'The high lane saturated (checkout traffic beyond capacity during a sale) while a low lane shares the workers (the reports that never ran): aging keeps the low lane within its wait bound; strict priority (--mutant no-aging) starves it.',
  seed: 61,
  durationS: 16,
  load: { model: 'constant', rate: 100 },
  workers: 2,
  concurrency: 2,
  lanes: [
    { queue: 'checkout', priority: 9, share: 9 },
    { queue: 'reports', priority: 0, share: 1 },
  ],
  // 2 workers x 2 slots x 50 ms: about 80 jobs/s of capacity against 100 offered.
  mix: [{ kind: 'normal', share: 1, durationMs: { dist: 'fixed', ms: 50 } }],
  engine: { pollMs: 50, agingMs: 300 },
  // No effect jobs here (fixed-length work keeps the capacity known), so the effect check has nothing to judge.
  checkers: {
    'exactly-one-effect': false,
    fairness: { lowQueues: ['reports'], highQueues: ['checkout'], maxLowWaitMs: 17_000 },
    // Both lanes back up for seconds: the engine's sampler must read the ages the harness reads.
    'sampler-agrees': true,
    // Every claim chooses between backed-up lanes: none may pass over a better effective priority.
    'priority-order': true,
    // A backlog of 50 ms jobs at the default claim-ahead: the buffer may grow past its 2 jobs only to what 2 slots run
    // in 100 ms (3 or 4; 2 when a loaded machine stretches the handlers past 67 ms), however long the backlog
    // (claim-ahead-paced; compare --mutant claim-ahead-unpaced, whose workers claim the backlog and make jobs wait seconds).
    'claim-ahead-paced': true,
    // Thousands of 50 ms handlers behind 2 full slots per worker, jobs waiting for each: never a third at once.
    'handlers-within-concurrency': true,
  },
  drainTimeoutS: 60,
});
