import type { WorkerStrategies } from '../../engine/worker/strategies.ts';
import type { Mutant } from './types.ts';

/** One slot more than the worker has: `inFlight.size <= concurrency` where `<` was meant (the audit's b12). */
export const oneSlotTooMany: WorkerStrategies['freeSlots'] = (running, concurrency) => concurrency + 1 - running;

export const extraHandlerSlot: Mutant = {
  breaks: 'a worker starts a job claimed ahead when all its slots are busy, so it runs concurrency + 1 handlers at once',
  caughtBy: 'handlers-within-concurrency',
  scenario: 'claim-ahead',
  changes: [{ kind: 'strategy', strategy: 'freeSlots', use: oneSlotTooMany }],
};
