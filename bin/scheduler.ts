// A cron materializer node: turns due occurrences of every enabled schedule
// into job rows, until SIGTERM/SIGINT (or an IPC {kind:'stop'}).
//
//   DATABASE_URL=... stampede scheduler [--node-id ID] [--tick-ms N] [--lookahead-ms N]
//                                       [--max-skew-ms N] [--catch-up-window-ms N]
//                                       [--metrics-port N [--metrics-host ADDR]]
//
// STAMPEDE_CLOCK_SKEW_MS skews this node's clock (a SkewedClock over the
// system clock), so a scenario can run nodes ahead of or behind the database.
// Started with an IPC channel (child_process.fork), it forwards every engine
// event as {kind:'event', name, payload, nodeTime, hostTime} (EventMessage) and accepts
// {kind:'clock:jump', deltaMs} (step this node's clock) and {kind:'stop'}.
// Simulation only: {kind:'clock:jump', deltaMs, world: true} moves the node's
// reading of the database clock by the same delta, so the node lives at another
// date (a real DST night of a real zone) with its true skew, and "missed" is
// still decided by (its view of) the database clock. Nothing sets it in production.
import { hostname } from 'node:os';
import { SkewedClock, systemClock } from '../engine/clock.ts';
import { CRON, CronMaterializer, materializerQueries } from '../engine/cron/materializer.ts';
import { Db } from '../engine/db.ts';
import { ValidationError } from '../engine/errors.ts';
import { Events } from '../engine/events.ts';
import { createLogger } from '../engine/log.ts';
import { bindEngineEvents, createMetrics, MetricsServer } from '../engine/metrics/index.ts';
import { PeriodicLoop } from '../engine/periodic.ts';
import { forwardToParent, toParent } from '../engine/supervisor/event-shipper.ts';
import { bindMetricsServer, databaseUrl, errorText, exitCodeOf, exitOnHelp, integerText, hostFlag, parseFlags, portFlag, requireMigrated, usageAfter, UsageError } from './cli-args.ts';
import { HELP } from './help.ts';
import { readOptionFlags } from './option-flags.ts';
import { parserOptions, usageText } from './usage.ts';

const USAGE = usageText('scheduler', HELP.scheduler);

// The materializer's own loaded queries, so the node reads the database clock with the same query it would.
const q = materializerQueries;

const log = createLogger('scheduler');

function int(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = integerText(value);
  if (n === undefined) throw new ValidationError(flag, `"${value}" is not an integer number of milliseconds`);
  return n;
}

async function main(): Promise<number> {
  exitOnHelp(process.argv.slice(2), USAGE);
  const { values } = parseFlags(process.argv.slice(2), parserOptions(HELP.scheduler.flags));
  const url = databaseUrl();
  const skewMs = int(process.env.STAMPEDE_CLOCK_SKEW_MS, 'STAMPEDE_CLOCK_SKEW_MS', 0);
  const clock = new SkewedClock(systemClock, skewMs);
  const events = new Events((err, event) => log.error('event listener threw', { event, error: (err as Error).message }));
  forwardToParent(events, ['cron'], () => clock.now());
  if (values['node-id'] !== undefined && values['node-id'].trim() === '') throw new UsageError('--node-id: expected a name for this node, got ""');
  const nodeId = values['node-id'] ?? `scheduler-${hostname()}-${process.pid}`;
  const db = new Db({ connectionString: url, maxConnections: 2, applicationName: `stampede:scheduler:${nodeId}` });
  let worldShiftMs = 0;
  const m = new CronMaterializer({
    db,
    dbNow: async () => ((await db.query(q.DbNow)).rows[0].now as Date).getTime() + worldShiftMs,
    nodeId,
    clock,
    events,
    ...readOptionFlags(CRON, values),
    log: log.child(nodeId),
  });

  // /metrics (off unless --metrics-port): the clock-skew gauge and cron refusals of this node.
  const metricsPort = portFlag(values, 'metrics-port');
  const metrics = metricsPort === undefined ? null : createMetrics();
  const unbind = metrics ? bindEngineEvents(events, metrics) : () => {};
  const server = metrics ? new MetricsServer(metrics.registry, { port: metricsPort, host: hostFlag(values, 'metrics-host') }) : null;
  const skewGauge = new PeriodicLoop({
    clock,
    log,
    what: 'skew gauge',
    intervalMs: m.tickMs,
    runOnce: async () => {
      if (m.clockSkewMs !== null) metrics?.setClockSkew(nodeId, m.clockSkewMs / 1000);
    },
  });
  await requireMigrated(db, log);
  // Before the first tick: bound after it, a refused bind was printed while the node went on materializing.
  await bindMetricsServer(server, db);

  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      log.info('stopping', { nodeId });
      await m.stop();
      await skewGauge.stop();
      await server?.stop();
      unbind();
      await db.close();
      await toParent.flush(); // the last turn's events reach the parent before the process ends
      resolveDone();
    })());
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('message', (msg: any) => {
    if (msg?.kind === 'clock:jump' && Number.isFinite(msg.deltaMs)) {
      clock.jump(msg.deltaMs);
      if (msg.world === true) worldShiftMs += msg.deltaMs;
      log.info('clock jumped', { deltaMs: msg.deltaMs, skewMs: clock.skewMs, worldShiftMs });
    } else if (msg?.kind === 'stop') {
      void stop();
    }
  });
  // The parent going away is a stop, not an orphaned node materializing on its own.
  process.on('disconnect', stop);

  log.info('materializing', { nodeId, skewMs, tickMs: m.tickMs, lookaheadMs: m.lookaheadMs, maxSkewMs: m.maxSkewMs });
  m.start();
  if (metrics) skewGauge.start();
  await done;
  return 0;
}

try {
  process.exitCode = await main();
  if (process.connected) process.disconnect();
} catch (err) {
  process.stderr.write(`stampede scheduler: ${errorText(err)}\n` + usageAfter(err, USAGE));
  process.exitCode = exitCodeOf(err);
  if (process.connected) process.disconnect();
}
