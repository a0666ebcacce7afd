import { DASHBOARD_DEFAULTS } from '../../engine/dashboard/server.ts';
import type { Mutant } from './types.ts';

/**
 * The dashboard's default interface becomes 0.0.0.0, as when a container-friendly refactor makes "listen
 * everywhere" the default: `stampede dashboard` with no --host still starts, prints its address with the token and
 * serves the page, but on every interface of the machine, so anyone who can reach it may try the token against
 * the control verbs. A --host given still wins, so every deployment that names one looks right.
 */
export const dashboardDefaultHostAny: Mutant = {
  breaks: '`stampede dashboard` with no --host listens on 0.0.0.0 (every interface) instead of 127.0.0.1',
  caughtBy: 'dashboard-bound-as-told',
  scenario: 'operator-chaos',
  // Only the `stampede dashboard` the dashboard-cli fault starts: the runner's own dashboard keeps to loopback.
  runsIn: 'dashboard',
  changes: [
    {
      kind: 'table',
      table: 'dashboard-address',
      entry: 'of',
      use: (given) => ({ port: given.port ?? DASHBOARD_DEFAULTS.port, host: given.host ?? '0.0.0.0' }),
    },
  ],
};
