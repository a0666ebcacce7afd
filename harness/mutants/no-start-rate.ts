import { queryPatch, type Mutant } from './types.ts';

/**
 * The claim takes a rate-limited queue's allowance from its in-flight room alone, as if the gate's answer were
 * only that: the token bucket is still drawn (claim_gate runs unchanged) but its answer is thrown away. A queue
 * with no in-flight limit is then unlimited.
 */
export const noStartRate: Mutant = {
  breaks: "claims ignore a queue's start-rate bucket (max_starts_per_second), so a fleet starts as many jobs a second as it has free slots",
  caughtBy: 'start-rate',
  scenario: 'downstream-limit',
  changes: [
    queryPatch('engine/worker/worker.sql', 'ClaimJobs', [
      {
        find: 'SELECT g.queue, g.paused, g.allowance, g.per_key, g.key_cursor, g.sequential FROM stampede.claim_gate($1::text[], $2::int) g',
        replace:
          'SELECT g.queue, g.paused, CASE WHEN s.max_starts_per_second IS NULL OR g.paused THEN g.allowance ' +
          'WHEN s.max_in_flight IS NULL THEN NULL ' +
          "ELSE greatest(0, s.max_in_flight - (SELECT count(*) FROM stampede.jobs c WHERE c.state = 'claimed' AND c.queue = g.queue))::int END AS allowance, " +
          'g.per_key, g.key_cursor, g.sequential ' +
          'FROM stampede.claim_gate($1::text[], $2::int) g LEFT JOIN stampede.queue_settings s ON s.queue = g.queue',
      },
    ]),
  ],
};
