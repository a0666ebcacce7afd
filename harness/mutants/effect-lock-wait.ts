import { queryPatch, type Mutant } from './types.ts';

/**
 * effectOnce waits for the key's lock instead of trying it: a retry whose
 * effect is held by a frozen worker's open transaction queues behind it,
 * holding its own claim all the while, so any death of its worker meanwhile
 * (a kill unrelated to the job) is charged to the job as a crash.
 */
export const effectLockWait: Mutant = {
  breaks: "a retry waits behind a frozen worker's uncommitted effect while holding its claim, so unrelated kills of its worker count as the job's crashes",
  caughtBy: 'no-effect-lock-wait',
  scenario: 'slow-worker-no-heartbeat',
  changes: [
    queryPatch('engine/worker/worker.sql', 'RecordEffectKey', [
      {
        find: "SELECT pg_try_advisory_xact_lock(hashtext('stampede:effect'), hashtext($1)) AS got",
        replace: "SELECT pg_advisory_xact_lock(hashtext('stampede:effect'), hashtext($1))::text = '' AS got",
      },
    ]),
  ],
};
