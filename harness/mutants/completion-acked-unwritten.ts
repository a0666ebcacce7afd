import { queryPatch, type Mutant } from './types.ts';

/**
 * The batched completion answers every id it was given, not the ids its
 * fenced UPDATE wrote: a completion the fence refused is reported done. In
 * a failover that lost the job's claim (the promoted standby never had it),
 * the worker's retried completion reaches the new primary after the
 * promotion, writes nothing, and is acknowledged anyway: a loss no
 * replication lag explains (the write was acknowledged after the
 * promotion), and the job runs again.
 */
export const completionAckedUnwritten: Mutant = {
  breaks: 'a completion the lease fence refused is acknowledged as written, so after a failover that lost its claim the job is reported done and runs again',
  caughtBy: 'failover-async',
  scenario: 'failover-async',
  changes: [
    queryPatch('engine/worker/worker.sql', 'CompleteJobs', [
      { find: "UPDATE stampede.jobs j\n   SET state = 'done'", replace: "WITH written AS (UPDATE stampede.jobs j\n   SET state = 'done'" },
      { find: 'RETURNING j.id', replace: "RETURNING j.id) SELECT u::bigint AS id FROM unnest(string_to_array($1::text, ',')) AS u" },
    ]),
  ],
};
