import type { Mutant } from './types.ts';

/**
 * The queues page converts the oldest job's age to seconds and compares it
 * with the objective in milliseconds, a one-word slip: 90 s reads as 90
 * against 60,000, and no queue is ever marked over its SLO. The page still
 * shows the age, so it looks right until the queue that is on fire is the one
 * left unmarked.
 */
export const sloMarkInSeconds: Mutant = {
  breaks: 'the dashboard compares a queue\'s oldest age in seconds with its SLO in ms, so it never marks a queue over the SLO',
  caughtBy: 'dashboard-slo-mark',
  scenario: 'operator-chaos',
  // The dashboard is served by the scenario runner.
  runsIn: 'runner',
  changes: [{ kind: 'table', table: 'dashboard-queue-marks', entry: 'overSlo', use: (oldestAgeMs, sloMs) => oldestAgeMs / 1000 > sloMs }],
};
