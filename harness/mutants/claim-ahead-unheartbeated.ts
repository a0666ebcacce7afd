import type { Mutant } from './types.ts';

export const claimAheadUnheartbeated: Mutant = {
  breaks: 'a job claimed ahead is renewed only once it starts, so one that waits for a slot longer than its lease loses it to the rescuer while its worker is alive',
  caughtBy: 'claim-ahead-lease',
  scenario: 'claim-ahead',
  changes: [{ kind: 'strategy', strategy: 'leaseRenewedFrom', use: 'start' }],
};
