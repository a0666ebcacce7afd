import { queryPatch, type Mutant } from './types.ts';

/**
 * The archiver's batch takes every finished job, dead ones too (as if
 * "finished" meant done or dead): a dead job leaves the hot table, and its
 * dead letter goes with it (ON DELETE CASCADE), so an operator can no longer
 * find or redrive it. Runs in the archiver process.
 */
export const archiveDeadJobs: Mutant = {
  breaks: 'the archiver moves dead jobs too, deleting their dead letters with them',
  caughtBy: 'archive-once',
  scenario: 'operator-chaos',
  runsIn: 'archiver',
  changes: [
    queryPatch('engine/archive/archive.sql', 'ArchiveBatch', [
      { find: "WHERE state = 'done' AND finished_at <", replace: "WHERE state IN ('done', 'dead') AND finished_at <" },
      { find: "WHERE j.id = picked.id AND j.state = 'done'", replace: "WHERE j.id = picked.id AND j.state IN ('done', 'dead')" },
    ]),
  ],
};
