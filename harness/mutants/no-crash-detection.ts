import { queryPatch, type Mutant } from './types.ts';

/** The rescuer still counts crashes but never convicts on them ($2, maxCrashes, stays referenced). */
export const noCrashDetection: Mutant = {
  breaks: 'a job that keeps killing its worker is retried like any other failure instead of dead-lettered early',
  // The poison crash-loops through its whole attempt budget: workers keep dying long after the incident.
  // dead-letter-routing and crash-loop-isolation fail too; the recovery is what the incident costs.
  caughtBy: 'fleet-recovers',
  scenario: 'poison-herd',
  changes: [
    queryPatch('engine/worker/rescuer.sql', 'RescueExpiredLeases', [
      { find: "WHEN expired.dead AND j.crash_count + 1 >= $2 THEN 'dead'", replace: "WHEN false AND j.crash_count + 1 >= $2 THEN 'dead'" },
      { find: 'OR (expired.dead AND j.crash_count + 1 >= $2) THEN now() END', replace: 'OR (false AND j.crash_count + 1 >= $2) THEN now() END' },
    ]),
  ],
};
