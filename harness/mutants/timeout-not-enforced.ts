import type { Mutant } from './types.ts';

/**
 * A handler's time limit is never armed (as when a refactor drops the timer
 * but keeps its disarm): `timeoutMs` is accepted and reported, and a handler
 * that runs past it runs on to completion instead of failing the attempt.
 */
export const timeoutNotEnforced: Mutant = {
  breaks: 'a handler running longer than its queue\'s timeoutMs runs on to completion instead of failing the attempt with JobTimeoutError',
  caughtBy: 'handler-timeout',
  scenario: 'slow-worker',
  changes: [
    {
      kind: 'strategy',
      strategy: 'handlerTimeout',
      // Never fires; settles only when disarmed, as the real timer does then.
      use: (_clock, _timeoutMs, disarm) => new Promise((_resolve, reject) => disarm.addEventListener('abort', () => reject(disarm.reason), { once: true })),
    },
  ],
};
