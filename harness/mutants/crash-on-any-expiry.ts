import { queryPatch, type Mutant } from './types.ts';

/**
 * The rescuer as it was before worker liveness: every expired lease is a
 * crash of its job, whether or not its holder is alive. A live worker that
 * lost its lease (a Postgres restart under load, a stall with heartbeats
 * off) has its jobs charged crashes, and a job caught twice is dead-lettered
 * as a poison pill.
 */
export const crashOnAnyExpiry: Mutant = {
  breaks: 'every expired lease counts as a crash of its job, even when its worker is alive (it only lost its connection or stalled)',
  caughtBy: 'crash-loop-isolation',
  scenario: 'slow-worker-no-heartbeat',
  changes: [
    queryPatch('engine/worker/rescuer.sql', 'RescueExpiredLeases', [
      { find: '     SELECT w.worker_id IS NULL\n', replace: '     SELECT true OR w.worker_id IS NULL\n' },
    ]),
  ],
};
