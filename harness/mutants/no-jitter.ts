import { backoffCeilingMs } from '../../engine/worker/backoff.ts';
import type { WorkerStrategies } from '../../engine/worker/strategies.ts';
import type { Mutant } from './types.ts';

/** Fixed-interval retries: exactly the backoff ceiling, every time. */
export const ceilingDelayMs: WorkerStrategies['retryDelayMs'] = (attempt, policy) => backoffCeilingMs(attempt, policy);

export const noJitter: Mutant = {
  breaks: 'retries wait exactly the backoff ceiling (no full jitter), so a shared outage retries in lockstep',
  caughtBy: 'retry-spread',
  scenario: 'retry-storm',
  changes: [{ kind: 'strategy', strategy: 'retryDelayMs', use: ceilingDelayMs }],
};
