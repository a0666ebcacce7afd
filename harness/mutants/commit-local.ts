import type { Mutant } from './types.ts';

/**
 * The worker's connections commit with synchronous_commit = local (a
 * deployment that set it for speed, in PGOPTIONS or on the role): each
 * COMMIT waits for the primary's own WAL flush but not for the synchronous
 * standby, so the worker is told its claim, completion or effect is done
 * while only the primary has it, and a failover to the standby undoes it.
 */
export const commitLocal: Mutant = {
  breaks: "the worker's connections commit with synchronous_commit local, so a failover to the synchronous standby loses acknowledged completions and effects",
  caughtBy: 'failover-sync',
  scenario: 'failover-sync',
  changes: [{ kind: 'env', name: 'PGOPTIONS', value: '-c synchronous_commit=local' }],
};
