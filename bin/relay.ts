// An outbox relay process: `stampede relay --deliver ./my-deliver.js [options]`.
// Reads DATABASE_URL. Delivers the outbox at least once through the module's
// deliver(row, {idempotencyKey, attempt, signal}) and, with --retention-ms,
// also prunes old dedup keys and delivered outbox rows. Run as many as you
// like: they share the work with SKIP LOCKED. SIGTERM/SIGINT: finish the
// deliveries in flight, exit 0.
import { systemClock } from '../engine/clock.ts';
import { Db } from '../engine/db.ts';
import { Pruner, PRUNER } from '../engine/effects/pruner.ts';
import { OutboxRelay, RELAY, type Deliver } from '../engine/effects/relay.ts';
import { Events } from '../engine/events.ts';
import { createLogger } from '../engine/log.ts';
import { SeededRng, randomSeed } from '../engine/rng.ts';
import { forwardToParent, toParent } from '../engine/supervisor/event-shipper.ts';
import { databaseUrl, importModuleFlag, exitCodeOf, exitOnHelp, intFlag, parseFlags, requireMigrated, shutdownWhenOrphaned, usageAfter, UsageError } from './cli-args.ts';
import { HELP } from './help.ts';
import { readOptionFlags } from './option-flags.ts';
import { parserOptions, usageText } from './usage.ts';

const USAGE = usageText('relay', HELP.relay);


async function loadDeliver(path: string): Promise<Deliver> {
  const mod = await importModuleFlag('--deliver', path);
  const exported = mod.deliver ?? mod.default;
  if (typeof exported !== 'function') {
    throw new UsageError(`--deliver ${path}: expected a module exporting deliver (or a default) as a function (row, ctx) => Promise`);
  }
  // A factory (no parameters) returns the deliver function; deliver itself takes (row, ctx).
  return exported.length === 0 ? ((await exported()) as Deliver) : (exported as Deliver);
}

async function main(): Promise<void> {
  exitOnHelp(process.argv.slice(2), USAGE);
  const { values } = parseFlags(process.argv.slice(2), parserOptions(HELP.relay.flags));
  if (!values.deliver) throw new UsageError('--deliver is required');
  const url = databaseUrl();
  const deliver = await loadDeliver(values.deliver);
  const log = createLogger('relay');
  const events = new Events((err, event) => log.warn('event listener threw', { event, error: String(err) }));
  forwardToParent(events, ['relay', 'pruner'], () => systemClock.now());
  const tuning = readOptionFlags(RELAY, values);
  const db = new Db({ connectionString: url, maxConnections: Math.min(50, (tuning.batchSize ?? RELAY.defaults.batchSize) + 2), applicationName: 'stampede:relay' });
  const seed = values.seed ?? String(randomSeed());
  const rng = new SeededRng(seed);
  const relay = new OutboxRelay({
    db,
    deliver,
    topics: values.topics?.split(','),
    ...tuning,
    relayId: values['relay-id'],
    rng: rng.fork('relay'),
    events,
    log,
  });
  const retentionMs = intFlag(values, 'retention-ms', 1);
  const pruner =
    retentionMs === undefined
      ? undefined
      : new Pruner({ db, retentionMs, ...readOptionFlags(PRUNER, values), events, log: log.child('pruner') });
  await requireMigrated(db, log);
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    log.info('stopping: finishing deliveries in flight');
    await Promise.all([relay.stop(), pruner?.stop()]);
    await db.close();
    await toParent.flush(); // the last turn's events, before exit cuts them off
    process.exit(0);
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  process.on('disconnect', shutdown); // the harness that started us is gone
  shutdownWhenOrphaned(shutdown);
  relay.start();
  pruner?.start();
  log.info('started', { id: relay.id, topics: values.topics ?? '*', seed, pruning: retentionMs !== undefined });
  process.send?.({ kind: 'ready', relayId: relay.id, pid: process.pid });
}

main().catch((err) => {
  process.stderr.write(`stampede relay: ${(err as Error).message}\n` + usageAfter(err, USAGE));
  process.exit(exitCodeOf(err));
});
