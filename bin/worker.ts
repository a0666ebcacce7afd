// A worker process: `stampede worker --handlers ./my-handlers.js [options]`.
// Reads DATABASE_URL. SIGTERM/SIGINT: stop claiming, let in-flight jobs
// finish within --grace-ms, hand back the rest, exit 0.
import { SkewedClock, systemClock } from '../engine/clock.ts';
import { Db } from '../engine/db.ts';
import { Events, type WorkerSettings } from '../engine/events.ts';
import type { Handlers } from '../engine/handler.ts';
import { createLogger } from '../engine/log.ts';
import { SeededRng, randomSeed } from '../engine/rng.ts';
import { eventMessage } from '../engine/supervisor/event-message.ts';
import { forwardToParent, toParent } from '../engine/supervisor/event-shipper.ts';
import { resolveQueueOptions, WORKER, type WorkerOptions } from '../engine/worker/options.ts';
import { Worker } from '../engine/worker/worker.ts';
import { bindEngineEvents, createMetrics, MetricsServer, QueueStateSampler } from '../engine/metrics/index.ts';
import { databaseUrl, importModuleFlag, exitCodeOf, exitOnHelp, parseFlags, bindMetricsServer, hostFlag, portFlag, requireMigrated, shutdownWhenOrphaned, usageAfter, UsageError } from './cli-args.ts';
import { HELP } from './help.ts';
import { readOptionFlags } from './option-flags.ts';
import { parserOptions, usageText } from './usage.ts';

const USAGE = usageText('worker', HELP.worker);


async function loadHandlers(path: string): Promise<Handlers> {
  const mod = await importModuleFlag('--handlers', path);
  const exported = mod.default ?? mod.handlers;
  const handlers = typeof exported === 'function' ? await exported() : exported;
  if (!handlers || typeof handlers !== 'object') {
    throw new UsageError(`--handlers ${path}: expected a module whose default export is {queue: handler} or a function returning one`);
  }
  return handlers as Handlers;
}

function workerSettings(workerId: string, options: WorkerOptions, db: Db): WorkerSettings {
  const queues = Object.fromEntries(
    Object.keys(options.handlers).map((name) => {
      const { leaseMs, heartbeatMs, backoffBaseMs, backoffCapMs, timeoutMs } = resolveQueueOptions(options, name);
      return [name, { leaseMs, heartbeatMs, backoffBaseMs, backoffCapMs, timeoutMs: timeoutMs ?? null }];
    }),
  );
  return {
    workerId,
    concurrency: options.concurrency ?? WORKER.defaults.concurrency,
    maxCrashes: options.maxCrashes ?? WORKER.defaults.maxCrashes,
    agingMs: options.agingMs ?? WORKER.defaults.agingMs,
    rescue: options.rescue ?? WORKER.defaults.rescue,
    preparedStatements: db.options.preparedStatements !== false,
    queues,
  };
}

async function main(): Promise<void> {
  exitOnHelp(process.argv.slice(2), USAGE);
  const { values } = parseFlags(process.argv.slice(2), parserOptions(HELP.worker.flags));
  if (!values.handlers) throw new UsageError('--handlers is required');
  const url = databaseUrl();
  const skewMs = Number(process.env.STAMPEDE_CLOCK_SKEW_MS ?? 0);
  if (!Number.isFinite(skewMs)) throw new UsageError(`STAMPEDE_CLOCK_SKEW_MS: expected a number of ms, got "${process.env.STAMPEDE_CLOCK_SKEW_MS}"`);

  // Every flag is checked before the handlers module runs its own start-up code.
  const tuning = readOptionFlags(WORKER, values);
  const metricsPort = portFlag(values, 'metrics-port');
  let handlers = await loadHandlers(values.handlers);
  if (values.queues !== undefined) {
    // `--queues ""` (an unset shell variable) must not mean every queue.
    if (values.queues.trim() === '') throw new UsageError(`--queues: expected a comma-separated list of queue names, got ""`);
    const wanted = values.queues.split(',');
    for (const q of wanted) if (!handlers[q]) throw new UsageError(`--queues: no handler for queue "${q}" in ${values.handlers}`);
    handlers = Object.fromEntries(wanted.map((q) => [q, handlers[q]]));
  }
  const log = createLogger('worker');
  const db = new Db({
    connectionString: url,
    maxConnections: (tuning.concurrency ?? WORKER.defaults.concurrency) + 4,
    applicationName: 'stampede:worker',
    preparedStatements: !values['no-prepared-statements'],
  });
  const events = new Events((err, event) => log.warn('event listener threw', { event, error: String(err) }));
  const clock = new SkewedClock(systemClock, skewMs);
  forwardToParent(events, ['worker', 'rescuer'], () => clock.now());
  const seed = values.seed ?? String(randomSeed());
  const options: WorkerOptions = {
    db,
    handlers,
    events,
    clock,
    rng: new SeededRng(seed),
    log,
    workerId: values['worker-id'],
    ...tuning,
  };
  const worker = new Worker(options);
  // /metrics: off unless a port is given; on 127.0.0.1 unless a host is given. The queue-state
  // sampler queries the database; the workers started with --sample-queue-state elect one to run it.
  const metrics = metricsPort === undefined ? null : createMetrics({ defaultLabels: { worker: worker.id } });
  const unbind = metrics ? bindEngineEvents(events, metrics) : () => {};
  // Every worker started with --sample-queue-state joins one election: one round per interval for them all.
  const sampler = metrics && values['sample-queue-state'] ? new QueueStateSampler(db, clock, metrics, { elect: true, samplerId: worker.id }) : null;
  const server = metrics ? new MetricsServer(metrics.registry, { port: metricsPort, host: hostFlag(values, 'metrics-host') }) : null;
  await requireMigrated(db, log);
  // Before the first claim: bound after it, the refusal raced the claim (the claim lost in every try we made, but a
  // slow bind could let it win and abandon a batch), and exited 1, which a supervisor restarts.
  await bindMetricsServer(server, db);
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    log.info('stopping: no new claims; waiting for in-flight jobs');
    await worker.stop();
    await server?.stop();
    await sampler?.stop();
    unbind();
    await db.close();
    // What the stop reported (hand-backs, worker:stopping) reaches the parent before the process ends.
    await toParent.flush();
    process.exit(0);
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  process.on('disconnect', shutdown); // the harness that started us is gone
  shutdownWhenOrphaned(shutdown);
  process.on('message', (m: { kind?: string; deltaMs?: number; rate?: number }) => {
    if (m?.kind === 'clock:jump' && Number.isFinite(m.deltaMs)) clock.jump(m.deltaMs!);
    if (m?.kind === 'clock:rate' && typeof m.rate === 'number' && Number.isFinite(m.rate) && m.rate > 0) clock.setRate(m.rate);
  });
  worker.start();
  sampler?.start();
  log.info('started', { id: worker.id, queues: Object.keys(handlers).join(','), seed, ...(server ? { metricsPort: server.port } : {}) });
  // The settings this worker resolved, per queue: what a harness holds its retries, heartbeats and leases to.
  // Shipped behind this worker's first events, as they were emitted.
  toParent.ship(eventMessage('worker:settings', workerSettings(worker.id, options, db), clock.now()));
  await toParent.flush();
  // With --metrics-port 0 the port is the system's choice: the parent learns it here.
  process.send?.({ kind: 'ready', workerId: worker.id, pid: process.pid, ...(server ? { metricsPort: server.port } : {}) });
}

main().catch((err) => {
  process.stderr.write(`stampede worker: ${(err as Error).message}\n` + usageAfter(err, USAGE));
  process.exit(exitCodeOf(err));
});
