import { retryJob } from '../../engine/control/index.ts';
import type { Mutant } from './types.ts';

/**
 * `stampede control retry` reads its job id with parseInt, as a refactor that
 * dropped the strict integer check would: "17x" (a stray key) reads as 17, so
 * an operator's typo retries a job they never named, where the real command
 * refuses the input (exit 2) and changes nothing.
 */
export const cliJobIdParseInt: Mutant = {
  breaks: '`stampede control retry 17x` reads the id with parseInt and retries job 17 instead of refusing the typo',
  caughtBy: 'cli-refuses-bad-input',
  scenario: 'operator-chaos',
  runsIn: 'control',
  changes: [
    {
      kind: 'table',
      table: 'control-commands',
      entry: 'retry',
      use: {
        args: 1,
        run: async (db, args, _values, actor) => {
          const r = await retryJob(db, Number.parseInt(args[0] ?? '', 10), actor());
          return `retried job ${r.jobId} (queue ${r.queue}, was ${r.from})\n`;
        },
      },
    },
  ],
};
