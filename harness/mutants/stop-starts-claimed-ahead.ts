import type { WorkerStrategies } from '../../engine/worker/strategies.ts';
import type { Mutant } from './types.ts';

/** At stop, every job claimed ahead is started (beyond the slots) instead of handed back. */
export const startAllAtStop: WorkerStrategies['claimedAheadAtStop'] = (waiting) => ({ handBack: [], start: waiting });

export const stopStartsClaimedAhead: Mutant = {
  breaks: 'a stopping worker starts the jobs it claimed ahead instead of handing them back, so a restart runs work it should have released (and is cut off by the grace)',
  caughtBy: 'no-start-after-stop',
  scenario: 'claim-ahead',
  changes: [{ kind: 'strategy', strategy: 'claimedAheadAtStop', use: startAllAtStop }],
};
