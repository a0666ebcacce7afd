// The operator's dashboard: `stampede dashboard [flags]` (its options: DASHBOARD in engine/dashboard/server.ts).
// Reads DATABASE_URL. Prints the address to open, access token included, on stdout.
// SIGTERM/SIGINT: stop serving, exit 0. Exit 2 on a bad flag or environment, 1 otherwise.
import { systemClock } from '../engine/clock.ts';
import { Db } from '../engine/db.ts';
import { DASHBOARD, DashboardServer } from '../engine/dashboard/server.ts';
import { flagged } from '../engine/options/declare.ts';
import { ValidationError } from '../engine/errors.ts';
import { createLogger } from '../engine/log.ts';
import { redactSecrets } from '../engine/redact.ts';
import { databaseUrl, hostFlag, listenFlagError, namedByFlag, parseFlags, UsageError } from './cli-args.ts';
import { readOptionFlags } from './option-flags.ts';
import { HELP } from './help.ts';
import { HELP_FLAG, parserOptions, usageText } from './usage.ts';

const USAGE = usageText('dashboard', HELP.dashboard);

/** The flag behind each DashboardServer option the engine may refuse: the declared ones', and the wiring's. */
const FLAG_OF_OPTION: Record<string, string> = {
  ...Object.fromEntries(flagged(DASHBOARD).map((key) => [key, `--${DASHBOARD.options[key].flag}`])),
  token: '--token',
  publicOrigins: '--public-origin',
};

async function main(): Promise<void> {
  const { values } = parseFlags(process.argv.slice(2), parserOptions({ ...HELP.dashboard.flags, ...HELP_FLAG }));
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const url = databaseUrl();
  const token = values.token ?? process.env.STAMPEDE_DASHBOARD_TOKEN;
  if (token !== undefined && token.length < 16) {
    throw new UsageError(`${values.token !== undefined ? '--token' : 'STAMPEDE_DASHBOARD_TOKEN'}: expected at least 16 characters (it is the only thing between the network and your jobs)`);
  }
  // The declared flags, read by the declaration; --host also refuses blank text, which would bind every interface.
  const options = { ...readOptionFlags(DASHBOARD, values), host: hostFlag(values, 'host') };
  const log = createLogger('dashboard');
  const db = new Db({ connectionString: url, maxConnections: 4, applicationName: 'stampede:dashboard' });
  let server: DashboardServer;
  try {
    server = new DashboardServer(db, systemClock, { ...options, token, publicOrigins: values['public-origin'] }, log);
  } catch (err) {
    await db.close();
    const named = namedByFlag(err, FLAG_OF_OPTION);
    if (named instanceof ValidationError || named instanceof TypeError) throw new UsageError(named.message);
    throw named;
  }
  const stop = async () => {
    await server.stop();
    await db.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  try {
    await server.start();
  } catch (err) {
    await db.close();
    throw listenFlagError(err, { port: '--port', host: '--host' });
  }
  if (server.host !== '127.0.0.1' && server.host !== '::1' && server.host !== 'localhost') {
    log.warn('listening beyond this machine: anyone who can reach it and has the token can redrive, pause and cancel; put TLS in front', { host: server.host });
  }
  process.stdout.write(`stampede dashboard: open ${server.loginUrl}\n`);
}

main().catch((err) => {
  const usage = err instanceof UsageError;
  process.stderr.write(redactSecrets(`stampede dashboard: ${(err as Error).message}\n`) + (usage ? `${USAGE}\n` : ''));
  process.exit(usage ? 2 : 1);
});
