import { OTEL_INSTALL, otelSdkMissing } from './otel-sdk.ts';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../../engine/clock.ts';
import { addSchedule } from '../../engine/cron/schedule.ts';
import { Db } from '../../engine/db.ts';
import { foldLogLines, type Logger } from '../../engine/log.ts';
import { setKeyWeight, setQueueLimits } from '../../engine/control/index.ts';
import { setQueueMaxAttempts } from '../../engine/enqueue.ts';
import { migrate } from '../../engine/migrator.ts';
import { SeededRng } from '../../engine/rng.ts';
import { buildReportJson, renderReport, type ReportInput } from '../../reports/render/index.ts';
import { runCheckers, strictRun, verdictOf, type CheckerName, type Verdict } from '../checkers/index.ts';
import { checkerPlan } from '../checkers/from-scenario.ts';
import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { applyMutant, applyMutantToDatabase, mutantRunsIn } from '../mutants/index.ts';
import { createDatabase, dropDatabase } from '../postgres/databases.ts';
import { provisionPostgres } from '../postgres/provision.ts';
import { enabledCheckers, engineSettingsFor, planScenario, type Scenario } from '../scenario.ts';
import { expectedCron } from './cron-facts.ts';
import { ComponentNodes } from './component-nodes.ts';
import { Downstream } from './downstream.ts';
import { OutboxSink } from './outbox-sink.ts';
import { readFinalState } from './final-state.ts';
import { Fleet } from './fleet.ts';
import { LoadGenerator } from './generator.ts';
import { drainWhileSettling, nemesisFor } from './nemesis.ts';
import { setLimitsAtTheCommandLine } from './control-cli.ts';
import { ProgressLine } from './progress.ts';
import { harnessQueries as q } from './queries.ts';
import { HistoryRecorder } from './recorder.ts';
import { recordSamplerRounds, RunSampler } from './sampler.ts';
import { PartitionReads } from './archive-partitions.ts';
import { RunPrometheus, type OpsOverrides } from './prometheus.ts';
import { writeStoredRun } from './stored-run.ts';
import { Ticker } from './ticker.ts';
import { installDbClock } from '../db-clock/db-clock.ts';
import { DASHBOARD_DEFAULTS, DashboardServer } from '../../engine/dashboard/server.ts';
import { DashboardClient } from './dashboard-client.ts';
import { QueuesPageReads } from './dashboard-reads.ts';
import { preloadWork } from './preload.ts';
import { LinkNet } from './links.ts';
import { LINK_FAULTS } from '../faults/spec.ts';
import { EmbeddedPostgres } from '../postgres/embedded.ts';
import { Replica } from '../postgres/replica.ts';
import { countMissingAcknowledged } from './failover-count.ts';
import { traceparentOf } from '../load/traceparent.ts';

export interface RunOptions {
  scenario: Scenario;
  /** Where the run's files go. Default reports/<scenario>/<run-id>. */
  outDir?: string;
  /** The exact command that replays this run; printed in the report. */
  replayCommand: string;
  log: Logger;
  /** Aborts the run: it tears down, checks what it has, and writes a report marked interrupted. */
  interrupt: AbortSignal;
  /** A team's own alert rules or dashboard for the run's Prometheus, instead of the shipped ops/ files. */
  ops?: OpsOverrides;
}

export interface RunResult {
  verdict: Verdict | 'interrupted';
  exitCode: number;
  dir: string;
  invariants: InvariantResult[];
  report: ReturnType<typeof buildReportJson>;
  /** What the invariants were judged on: the history and the final state (the side-by-side figures read them). */
  history: readonly HistoryEvent[];
  final: FinalState;
}

/**
 * pg-pool drops its error listener from a client while it is checked out, so
 * a backend terminated between two statements of a transaction (a restart, a
 * pg_terminate_backend: the faults this runner injects) emits an unhandled
 * 'error' and kills the process. Every client of the runner's pools keeps a
 * listener; the failed statement still rejects and is handled where it ran.
 */
function survivePoolClientErrors(db: Db): void {
  db.pool.on('connect', (client) => client.on('error', () => {}));
}

/**
 * A scenario with link faults, or with a worker built without prepared statements (prepared-statements-honoured
 * reads what it binds on the wire), puts the harness's proxy on each worker's link.
 */
function usesLinks(s: Scenario): boolean {
  return s.faults.some((f) => LINK_FAULTS.has(f.fault)) || Array.from({ length: s.workers }, (_, i) => engineSettingsFor(s, i)).some((e) => !e.preparedStatements);
}

/** A scenario that steps the database clock needs the simulated one installed; no other scenario gets it. */
function usesDbClock(s: Scenario): boolean {
  return s.faults.some((f) => f.fault === 'db-clock-jump');
}

/** The invariants judged over the harness's reads of the dashboard's queues page (a tab left open on it). */
const PAGE_READ_CHECKERS: ReadonlySet<CheckerName> = new Set(['dashboard-shows-fresh-round', 'dashboard-slo-mark', 'dashboard-page-timeout']);

/** A scenario that turns one of those on keeps a tab open on the queues page for the run. */
function readsQueuesPage(s: Scenario): boolean {
  return enabledCheckers(s).some((c) => PAGE_READ_CHECKERS.has(c));
}

/** A scenario with an operator fault issued through the dashboard, or a tab open on its page, gets one, served for the run. */
function usesDashboard(s: Scenario): boolean {
  return readsQueuesPage(s) || s.faults.some((f) => 'via' in f && f.via === 'dashboard');
}

/** A scenario that judges archive-retention records the archive's day partitions, read by the harness, for the run. */
function readsPartitions(s: Scenario): boolean {
  return s.archiver !== null && enabledCheckers(s).includes('archive-retention');
}

/** `2026-11-30T01-02-03Z-seed42`: sorts by time, names the seed. */
function runId(epochMs: number, seed: number): string {
  return `${new Date(epochMs).toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-')}-seed${seed}`;
}

/**
 * One scenario run, end to end: a real Postgres and a fresh database, the
 * engine as real OS processes, the open-model load and the fault timeline,
 * the drain, the invariants over the recorded history, the report, and a
 * teardown that leaves nothing behind, also when interrupted.
 */
export async function runScenario(opts: RunOptions): Promise<RunResult> {
  const { scenario: s, log } = opts;
  const clock = systemClock;
  const startedAt = clock.now();
  const dir = opts.outDir ?? join('reports', s.name, runId(startedAt, s.seed));
  mkdirSync(dir, { recursive: true });
  const recorder = new HistoryRecorder(clock, startedAt, join(dir, 'history.jsonl'));
  const server = await provisionPostgres({ log: log.child('postgres'), exitOnSignals: false });
  const dbName = `stampede_run_${s.seed}_${startedAt.toString(36)}`;
  let db: Db | undefined;
  let loadDb: Db | undefined;
  let fleet: Fleet | undefined;
  let components: ComponentNodes | undefined;
  let sampler: RunSampler | undefined;
  let dashboard: DashboardServer | undefined;
  let dashboardClient: DashboardClient | undefined;
  let pageReads: QueuesPageReads | undefined;
  let partitionReads: PartitionReads | undefined;
  let prometheus: RunPrometheus | null = null;
  let final: FinalState = { jobs: [], deadLetters: [], effects: {} };
  /** The database's time when the drain found nothing left to run; unset if it never did. */
  let drainedAt: Date | undefined;
  let loadWindow = { fromT: 0, toT: 0, fromDbMs: 0, toDbMs: 0 };
  let generator: LoadGenerator | undefined;
  let links: LinkNet | undefined;
  let replica: Replica | undefined;
  let faultPlan: ReturnType<typeof planScenario>['faults'] = [];
  const downstream = s.downstream ? new Downstream(s.downstream, recorder, clock) : undefined;
  const sink = s.relays ? new OutboxSink(recorder, clock) : undefined;
  let schedulesAddedDbMs = 0;
  // A mutant of code the runner itself runs (the engine's QueueStateSampler) is applied here, for this run only.
  const undoMutant = mutantRunsIn(s.engine.mutant) === 'runner' ? applyMutant(s.engine.mutant!) : undefined;
  try {
    const failoverSpec = s.faults.find((f) => f.fault === 'failover');
    if (failoverSpec && server instanceof EmbeddedPostgres) {
      // Before the database exists: it, the migrations and the load reach the standby by streaming.
      replica = await Replica.start(server, { mode: failoverSpec.replication, clock, rng: new SeededRng(s.seed).fork('replica'), log: log.child('replica') });
    }
    const primaryUrl = await createDatabase(server.adminUrl, dbName);
    // With a replica, every client of the run (workers, schedulers, the load, the harness's own pool) reaches the primary through the VIP.
    const url = replica ? replica.vip.urlThrough(primaryUrl) : primaryUrl;
    const openDb = () => {
      const d = new Db({ connectionString: url, maxConnections: 24, applicationName: 'stampede:harness' });
      survivePoolClientErrors(d);
      return d;
    };
    db = openDb();
    await migrate(db);
    // A mutant of a function the migrations define (stampede.fair_pick) is put in this run's database, before any worker connects.
    if (s.engine.mutant) await applyMutantToDatabase(s.engine.mutant, db);
    await db.query(q.CreateHarnessTables);
    // On stampede's own table: a peer's run (harness/engines/peer-run.ts) has no elected sampler to log.
    await db.query(q.LogSamplerRounds);
    for (const schedule of s.scheduler.schedules) await addSchedule(db, schedule);
    if (s.limitsVia === 'cli') await setLimitsAtTheCommandLine(s, url, recorder);
    else {
      const setup = { by: 'scenario', reason: `scenario ${s.name}: its declared limits`, allowNew: true };
      for (const [queue, l] of Object.entries(s.queueLimits)) {
        const perKey = { maxInFlightPerKey: l.maxInFlightPerKey, sequential: l.sequential };
        await setQueueLimits(db, queue, { maxInFlight: l.maxInFlight ?? null, maxStartsPerSecond: l.maxStartsPerSecond ?? null, ...perKey }, setup);
      }
      for (const [queue, weights] of Object.entries(s.keyWeights)) {
        for (const [key, weight] of Object.entries(weights)) await setKeyWeight(db, queue, key, weight, setup);
      }
    }
    for (const [queue, maxAttempts] of Object.entries(s.queueBudgets)) {
      await setQueueMaxAttempts(db, queue, maxAttempts);
      recorder.record({ type: 'setup:queue-budget', node: 'harness', queue, maxAttempts });
    }
    const workerEnv: Record<string, string> = downstream ? { STAMPEDE_HARNESS_DOWNSTREAM_URL: await downstream.start() } : {};
    const otelMissing = s.otel ? otelSdkMissing() : [];
    if (otelMissing.length) {
      // Run the scenario without it: its OpenTelemetry checks say what to install; the rest judge as ever.
      recorder.record({ type: 'otel:absent', node: 'harness', missing: otelMissing, install: OTEL_INSTALL });
      log.warn(`no OpenTelemetry SDK here (${otelMissing.join(', ')}): trace-continued and otel-counts-agree will be inconclusive; install it: ${OTEL_INSTALL}`);
      workerEnv.STAMPEDE_HARNESS_OTEL = '0';
    }
    schedulesAddedDbMs = ((await db.query(q.DbNow)).rows[0].now as Date).getTime();
    if (usesDbClock(s)) {
      // Only sessions opened after the install read the simulated clock: reopen the harness's pool
      // (the sampler, the drain) before anything else connects (docs/time.md).
      await installDbClock(db);
      await db.close();
      db = openDb();
    }

    const rng = new SeededRng(s.seed);
    const plan = planScenario(s, rng);
    faultPlan = plan.faults;
    if (usesLinks(s)) {
      // Only a scenario with link faults, or a worker whose wire must be read, puts proxies between its workers and
      // Postgres: the others measure the engine, not a splice.
      links = new LinkNet(url, clock, rng.fork('links'));
      await links.start(s.workers);
    }
    const linkNet = links;
    fleet = new Fleet(s, url, recorder, clock, log.child('fleet'), s.seed, workerEnv, linkNet ? (slot) => linkNet.workerUrl(slot) : undefined);
    components = new ComponentNodes(s, url, recorder, clock, log.child('components'), foldLogLines(), sink ? await sink.start() : undefined);
    // Before anything starts: a rules file or dashboard that does not load is a setup error.
    prometheus = RunPrometheus.prepare(s, opts.ops ?? {}, recorder, clock, log.child('prometheus'));
    sampler = new RunSampler(db, clock, recorder, s.thresholds, log.child('sampler'), prometheus?.samplerMetrics ?? null);
    // The load has its own pool: one committed INSERT per job, many in flight, so commits group.
    loadDb = new Db({ connectionString: url, maxConnections: 32, applicationName: 'stampede:load' });
    survivePoolClientErrors(loadDb);
    generator = new LoadGenerator(loadDb, clock, recorder, { maxInFlight: 64, lateMs: 100, maxAttempts: s.engine.maxAttempts, queueBudgets: s.queueBudgets, ...(s.otel && !otelMissing.length ? { traceparentOf: traceparentOf(s.seed) } : {}) });
    const progress = new ProgressLine(recorder, generator, sampler);
    fleet.start();
    components.start();
    await Promise.race([
      Promise.all(Array.from({ length: s.workers }, (_, i) => fleet!.worker(i)?.ready)),
      clock.sleep(60_000).then(() => Promise.reject(new Error('worker processes did not start within 60 s'))),
    ]);
    // Preloaded work is the state the run starts from: in place (and its retries failed once) before the first sample.
    await preloadWork(db, s, rng, recorder, clock, opts.interrupt);
    // One sample first, so the gauges Prometheus scrapes from the start are real figures.
    await sampler.runOnce();
    sampler.start();
    if (readsPartitions(s)) {
      partitionReads = new PartitionReads(db, clock, recorder, log.child('partition-reads'));
      partitionReads.start();
    }
    if (usesDashboard(s)) {
      // The engine's own dashboard over the run's database, on a free loopback port: its POST actions run under chaos too.
      dashboard = new DashboardServer(db, clock, { port: 0 }, log.child('dashboard'));
      await dashboard.start();
      dashboardClient = new DashboardClient(`http://127.0.0.1:${dashboard.port}`, dashboard.accessToken);
      // A tab left open on the queues page: the round it shows (beside the workers' elected sampler, if they run one),
      // its SLO marks and how it answers while the jobs table is locked are judged by PAGE_READ_CHECKERS.
      if (readsQueuesPage(s)) pageReads = new QueuesPageReads(dashboardClient, DASHBOARD_DEFAULTS.sharedRoundMaxAgeMs, recorder, clock, log.child('dashboard-reads'));
    }
    await prometheus?.start(fleet);

    const { nemesis, faultsOver } = nemesisFor(
      s,
      plan.faults,
      {
        db,
        url,
        server,
        fleet,
        load: generator,
        components,
        sink,
        ...(dashboardClient ? { dashboard: dashboardClient } : {}),
        links,
        ...(replica ? { replica } : {}),
        recorder,
        sampler,
        clock,
      },
      log.child('nemesis'),
      opts.interrupt,
    );
    const ticker = new Ticker(clock, 1000, () => progress.update('load'));
    try {
      recorder.record({ type: 'run:phase', node: 'harness', phase: 'load' });
      const loadStartT = recorder.now();
      progress.begin();
      const dbStart = (await db.query(q.DbNow)).rows[0].now as Date;
      await Promise.all([generator.run(plan.arrivals, loadStartT, opts.interrupt), nemesis.run(loadStartT)]);
      const dbEnd = (await db.query(q.DbNow)).rows[0].now as Date;
      loadWindow = { fromT: loadStartT, toT: recorder.now(), fromDbMs: dbStart.getTime(), toDbMs: dbEnd.getTime() };
      await fleet.stopSchedulers();

      recorder.record({ type: 'run:phase', node: 'harness', phase: 'drain' });
      ticker.phase = () => progress.update('drain');
      // Drained also means, with relays, that every committed intent has been delivered (or given up on).
      drainedAt = await drainWhileSettling(s, nemesis, faultsOver, clock, opts.interrupt, async () => {
        const left = (await db!.query(q.Unfinished)).rows[0];
        const undelivered = s.relays ? (await db!.query(q.UndeliveredIntents)).rows[0].n : 0;
        return left.n === 0 && undelivered === 0 ? (left.db_now as Date) : undefined;
      });
      if (replica) await countMissingAcknowledged(replica, dbName, recorder, log);
      await sampler.runOnce();
      // Twice, a moment apart: a worker whose counters did not move in between was idle, so its
      // counters and the events it reported must match (red-metrics).
      await fleet.scrapeMetrics();
      await clock.sleep(300);
      await fleet.scrapeMetrics();
      await prometheus?.read();
    } finally {
      ticker.stop();
      progress.done();
    }
  } catch (err) {
    if (!opts.interrupt.aborted) throw err;
    log.warn('interrupted', { error: (err as Error).message });
  } finally {
    if (opts.interrupt.aborted) recorder.record({ type: 'run:phase', node: 'harness', phase: 'interrupted' });
    await prometheus?.stop();
    await sampler?.stop();
    await pageReads?.stop();
    await dashboard?.stop();
    await components?.stop();
    // After the archiver stopped: its last pass finished, so this reading is the partitions at rest.
    await partitionReads?.stop().catch((err) => log.warn("could not read the archive's partitions", { error: (err as Error).message }));
    await fleet?.stop();
    if (db && s.sampleQueueState) await recordSamplerRounds(db, recorder).catch((err) => log.warn("could not read the elected sampler's rounds", { error: (err as Error).message }));
    for (const b of links?.workerBinds() ?? []) recorder.record({ type: 'link:statements', node: b.node, namedBinds: b.namedBinds, unnamedBinds: b.unnamedBinds });
    await links?.close();
    await sink?.stop();
    await downstream?.stop();
    if (db) final = await readFinalState(db, drainedAt).catch(() => final);
    await db?.close();
    await loadDb?.close();
    // After the final state: with a replica, it was read from the promoted standby through the VIP.
    await replica?.stop();
    await dropDatabase(server.adminUrl, dbName).catch(() => {});
    await server.stop();
    undoMutant?.();
  }

  recorder.record({ type: 'run:phase', node: 'harness', phase: 'check' });
  await recorder.close();
  const cron = expectedCron(s, recorder.events, { ...loadWindow, schedulesAddedDbMs }, faultPlan);
  const facts = { expectedCronKeys: cron.expectedKeys, allowedCronKeys: cron.allowedKeys, loadStartT: loadWindow.fromT };
  const { names, bounds } = checkerPlan(s, facts);
  const invariants = runCheckers(names, recorder.events, final, bounds);
  const interrupted = opts.interrupt.aborted;
  const v = verdictOf(invariants, { strict: strictRun() });
  const finishedAt = clock.now();
  const loadSeconds = Math.max(0.001, (loadWindow.toT - loadWindow.fromT) / 1000);
  const input: ReportInput = {
    scenario: { name: s.name, description: s.description },
    seed: s.seed,
    replayCommand: opts.replayCommand,
    startedAt,
    finishedAt,
    interrupted,
    verdict: v.verdict,
    offeredRate: s.load.rate,
    achievedRate: (generator?.stats.acknowledged ?? 0) / loadSeconds,
    history: recorder.events,
    final,
    invariants,
    thresholds: { oldestAgeSloMs: s.thresholds.oldestAgeSloMs, deadLetterDepth: s.thresholds.deadLetterDepthAlert },
    ...(s.incident ? { incidentWindow: { fromT: loadWindow.fromT + s.incident.fromS * 1000, toT: loadWindow.fromT + s.incident.toS * 1000 } } : {}),
  };
  writeStoredRun(dir, { scenario: s, names, bounds, report: input });
  await renderReport(input, dir);
  return {
    verdict: interrupted ? 'interrupted' : v.verdict,
    exitCode: interrupted ? 130 : v.exitCode,
    dir,
    invariants,
    report: buildReportJson(input),
    history: recorder.events,
    final,
  };
}
