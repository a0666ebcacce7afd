// An archiver node: `stampede archiver [--archive-after-ms N] [--retention-days N]
// [--batch-size N] [--interval-ms N]`. Moves done jobs out of the hot table into
// stampede.job_history (partitioned by day), creates partitions ahead and drops
// whole ones past retention. Safe to run on several nodes (SKIP LOCKED).
// Reads DATABASE_URL. SIGTERM/SIGINT: finish the batch in flight and exit 0.
import { Db } from '../engine/db.ts';
import { ARCHIVER, JobArchiver } from '../engine/archive/job-archiver.ts';
import { createLogger } from '../engine/log.ts';
import { databaseUrl, errorText, exitCodeOf, exitOnHelp, parseFlags, requireMigrated, shutdownWhenOrphaned, usageAfter } from './cli-args.ts';
import { HELP } from './help.ts';
import { readOptionFlags } from './option-flags.ts';
import { parserOptions, usageText } from './usage.ts';

const USAGE = usageText('archiver', HELP.archiver);

async function main(): Promise<void> {
  exitOnHelp(process.argv.slice(2), USAGE);
  const { values } = parseFlags(process.argv.slice(2), parserOptions(HELP.archiver.flags));
  const url = databaseUrl();
  const log = createLogger('archiver');
  const db = new Db({ connectionString: url, maxConnections: 2, applicationName: 'stampede:archiver' });
  const archiver = new JobArchiver({
    db,
    log,
    ...readOptionFlags(ARCHIVER, values),
  });
  await requireMigrated(db, log);
  // Once: Ctrl-C under npm run arrives twice (from the terminal and from npm).
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await archiver.stop();
      await db.close();
      process.exit(0);
    })());
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  shutdownWhenOrphaned(stop);
  archiver.start();
  log.info('archiving');
}

main().catch((err) => {
  process.stderr.write(`stampede archiver: ${errorText(err)}\n` + usageAfter(err, USAGE));
  process.exit(exitCodeOf(err));
});
