import { queryPatch, type Mutant } from './types.ts';

/**
 * The rescuer tells a restarted process from its dead predecessor by
 * comparing the restart with the lease's end instead of with the lease's last
 * write. A process restarted under the same worker id (a supervisor's fixed
 * id, a pod's name) before its predecessor's leases ran out renews the id's
 * liveness row; the rescuer takes that for the holder alive after its lease
 * ended, and the dead holder's jobs come back as lost leases, no crash
 * charged: a poison that kills every worker it touches is never convicted.
 */
export const restartVouchesForPredecessor: Mutant = {
  breaks: "a process restarted under a dead worker's id before that worker's leases ran out vouches for it: its jobs are taken back as lost leases, no crash charged",
  caughtBy: 'killed-holder-charged',
  scenario: 'worker-crash',
  changes: [
    queryPatch('engine/worker/rescuer.sql', 'RescueExpiredLeases', [
      { find: '            OR w.started_at > j.updated_at\n', replace: '            OR w.started_at > j.lease_expires_at\n' },
    ]),
  ],
};
