import type { Mutant } from './types.ts';

/**
 * The dead-letter depth panel queries a metric by a name the registry does not
 * export (as after a rename that missed the dashboard): the panel is empty in
 * every incident, which reads as "no dead letters". Patches the dashboard as
 * the runner loads it.
 */
export const panelOnRenamedMetric: Mutant = {
  breaks: "the dashboard's dead-letter depth panel queries a metric name nothing exports, so it shows no dead letters in an incident",
  caughtBy: 'dashboard-queries-live',
  scenario: 'poison-herd',
  runsIn: 'runner',
  changes: [
    {
      kind: 'ops-file',
      file: 'ops/grafana/stampede.json',
      edits: [{ find: '(stampede_dead_letter_depth{queue=~', replace: '(stampede_dead_letters_depth{queue=~' }],
    },
  ],
};
