import { enqueueIgnoresKey } from './enqueue-ignores-key.ts';
import type { Mutant } from './types.ts';

/**
 * The same broken enqueue as enqueue-ignores-key (no idempotency key
 * written), met where a producer's answer is really lost: the link proxy
 * cuts the answer of a committed enqueue, and the producer's re-send with
 * the same key makes a second job. Caught by unknown-outcome-resolved on the
 * network-partition scenario.
 */
export const resendIgnoresKey: Mutant = {
  ...enqueueIgnoresKey,
  breaks: 'an enqueue whose answer was cut after its commit, re-sent with the same key, creates a second job',
  caughtBy: 'unknown-outcome-resolved',
  scenario: 'network-partition',
};
