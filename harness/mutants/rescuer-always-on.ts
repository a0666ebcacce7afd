import type { Mutant } from './types.ts';

export const rescuerAlwaysOn: Mutant = {
  breaks: 'a worker started with rescue: false runs its own lease rescuer anyway, taking back expired leases a deployment meant another process to own',
  caughtBy: 'rescue-off-honoured',
  scenario: 'worker-crash',
  changes: [{ kind: 'strategy', strategy: 'runsRescuer', use: () => true }],
};
