// `stampede-queue postgres [--port N] [--data-dir DIR]`: a PostgreSQL 18 for someone who has none, the same embedded
// server (real binaries from npm) the harness and the tests start. Prints `DATABASE_URL=...` on stdout, one line;
// logs on stderr; runs until SIGINT/SIGTERM (or its parent goes away), then stops the server, removes its temp dir
// (and its data, unless --data-dir kept it) and exits 0. A crash of this process is covered by the server's reaper.
import { resolve } from 'node:path';
import { createLogger } from '../engine/log.ts';
import { EmbeddedPostgres, freePort } from '../harness/postgres/embedded.ts';
import { errorText, exitCodeOf, exitOnHelp, parseFlags, portFlag, shutdownWhenOrphaned, usageAfter, UsageError } from './cli-args.ts';
import { HELP, PREFERRED_POSTGRES_PORT } from './help.ts';
import { parserOptions, usageText } from './usage.ts';

const USAGE = usageText('postgres', HELP.postgres);

async function main(): Promise<void> {
  exitOnHelp(process.argv.slice(2), USAGE);
  const { values } = parseFlags(process.argv.slice(2), parserOptions(HELP.postgres.flags));
  const port = portFlag(values, 'port') ?? (await freePort(PREFERRED_POSTGRES_PORT));
  if (values['data-dir'] !== undefined && values['data-dir'].trim() === '') throw new UsageError('--data-dir: expected a directory, got ""');
  const dataDir = values['data-dir'] === undefined ? undefined : resolve(values['data-dir']);
  const log = createLogger('postgres');
  const server = new EmbeddedPostgres({ log, dataDir, port: port === 0 ? undefined : port });
  let stopping: Promise<void> | undefined;
  // Once: Ctrl-C under npm run arrives twice (from the terminal and from npm).
  const stop = () =>
    (stopping ??= (async () => {
      log.info('stopping PostgreSQL');
      await server.stop();
      log.info(dataDir ? 'stopped; the data is kept' : 'stopped; its temp dir is removed', dataDir ? { dataDir } : undefined);
      process.exit(0);
    })());
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  shutdownWhenOrphaned(stop);
  try {
    await server.start();
  } catch (err) {
    await server.stop();
    throw err;
  }
  process.stdout.write(`DATABASE_URL=${server.adminUrl}\n`);
  log.info('ready: export the DATABASE_URL line above; Ctrl-C stops the server');
}

main().catch((err) => {
  process.stderr.write(`stampede postgres: ${errorText(err)}\n` + usageAfter(err, USAGE));
  process.exit(exitCodeOf(err));
});
