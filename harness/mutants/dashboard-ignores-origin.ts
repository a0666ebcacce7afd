import type { Mutant } from './types.ts';

/**
 * The dashboard takes a POST from any Origin, as a refactor that dropped the
 * Origin check would ("the CSRF token is enough"): a page elsewhere that gets
 * hold of a session's form posts a control verb in the operator's name.
 * The session and CSRF checks stay.
 */
export const dashboardIgnoresOrigin: Mutant = {
  breaks: 'the dashboard takes a POST from a foreign Origin',
  caughtBy: 'dashboard-refuses-forged',
  scenario: 'operator-chaos',
  runsIn: 'runner',
  changes: [{ kind: 'table', table: 'dashboard-post-checks', entry: 'origin', use: () => null }],
};
