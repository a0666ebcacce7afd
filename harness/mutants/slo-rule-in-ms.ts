import type { Mutant } from './types.ts';

/**
 * The SLO rule's threshold written in milliseconds (60000) over a gauge in
 * seconds: the page for a stuck queue waits 16 hours. The rule still parses,
 * promtool still loads it, and test/metrics-rules.test.ts (which checks names,
 * not numbers) still passes; only Prometheus evaluating it under an incident
 * shows that it never fires. Patches the rules file as the runner loads it.
 */
export const sloRuleInMs: Mutant = {
  breaks: "StampedeOldestUnclaimedAgeOverSLO's threshold is written in milliseconds, so the page for a stuck queue never comes",
  caughtBy: 'prometheus-alerts',
  scenario: 'poison-herd',
  runsIn: 'runner',
  changes: [
    {
      kind: 'ops-file',
      file: 'ops/prometheus/alerts.yml',
      edits: [{ find: '(stampede_queue_oldest_unclaimed_age_seconds) > 60\n', replace: '(stampede_queue_oldest_unclaimed_age_seconds) > 60000\n' }],
    },
  ],
};
