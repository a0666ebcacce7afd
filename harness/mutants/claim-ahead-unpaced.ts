import { AHEAD_CAP } from '../../engine/worker/claim-ahead.ts';
import type { Mutant } from './types.ts';

export const claimAheadUnpaced: Mutant = {
  breaks:
    "the claim-ahead buffer jumps to 500 after any full claim, whatever the handlers' pace and however long its jobs waited: a worker of slow handlers claims the backlog and its jobs wait seconds for a slot",
  caughtBy: 'claim-ahead-paced',
  scenario: 'priority-starvation',
  changes: [
    {
      kind: 'strategy',
      strategy: 'claimAheadFor',
      use: (a) => (a.lastClaimFull && !Number.isNaN(a.meanHandlerMs) ? AHEAD_CAP : a.base),
    },
  ],
};
