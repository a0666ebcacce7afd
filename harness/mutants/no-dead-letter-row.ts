import { queryPatch, type Mutant } from './types.ts';

/** A crash-loop conviction marks the job dead but its dead-letter insert selects nothing: nobody can find the poison. */
export const noDeadLetterRow: Mutant = {
  breaks: 'a job convicted as a crash loop is dead without a dead-letter row',
  caughtBy: 'dead-letter-rows',
  scenario: 'poison-herd',
  changes: [
    queryPatch('engine/worker/rescuer.sql', 'RescueExpiredLeases', [
      {
        find: "   WHERE r.state = 'dead'\n",
        replace: "   WHERE r.state = 'dead' AND r.dead_code <> 'crash_loop'\n",
      },
    ]),
  ],
};
