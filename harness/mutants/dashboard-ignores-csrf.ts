import type { Mutant } from './types.ts';

/**
 * The dashboard takes a POST without its session's CSRF token, as a refactor
 * that trusted the session cookie and the Origin alone would: a form with a
 * wrong token, or none, runs its control verb.
 */
export const dashboardIgnoresCsrf: Mutant = {
  breaks: "the dashboard takes a POST without the session's CSRF token",
  caughtBy: 'dashboard-refuses-forged',
  scenario: 'operator-chaos',
  runsIn: 'runner',
  changes: [{ kind: 'table', table: 'dashboard-post-checks', entry: 'csrf', use: () => null }],
};
