import { backoffCeilingMs } from '../../engine/worker/backoff.ts';
import type { WorkerStrategies } from '../../engine/worker/strategies.ts';
import type { Mutant } from './types.ts';

/** "Equal jitter": half the ceiling plus random(0, half). Under the cap and spread, but never in the window's first half. */
export const equalJitterDelayMs: WorkerStrategies['retryDelayMs'] = (attempt, policy, rng) => {
  const half = backoffCeilingMs(attempt, policy) / 2;
  return Math.floor(half + rng.next() * half);
};

export const equalJitter: Mutant = {
  breaks: 'retries wait ceiling/2 + random(0, ceiling/2) ("equal jitter") instead of random(0, ceiling): under the cap and spread, but never early in the window',
  caughtBy: 'jitter-uniform',
  scenario: 'retry-storm',
  changes: [{ kind: 'strategy', strategy: 'retryDelayMs', use: equalJitterDelayMs }],
};
