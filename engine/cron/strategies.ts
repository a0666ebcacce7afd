import { dueOccurrences } from './occurrences.ts';

/**
 * INTERNAL. The decision a cron materializer makes each tick for each
 * schedule (which occurrences of its window are due under its DST and
 * catch-up policies), held in one object so that the harness can swap it for
 * a deliberately broken variant (its negative controls, harness/mutants/)
 * without a switch in production code, as engine/worker/strategies.ts does
 * for a job run. Not exported from engine/index.ts and not reachable through
 * CronMaterializer's options or any CLI flag: nothing but
 * harness/mutants/apply.ts ever assigns to it, and production runs the
 * default.
 */
export interface CronStrategies {
  /** Which occurrences of (progress, horizon] to enqueue, and the new progress mark (engine/cron/occurrences.ts). */
  dueOccurrences: typeof dueOccurrences;
}

export const cronStrategies: CronStrategies = {
  dueOccurrences,
};
