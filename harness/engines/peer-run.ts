import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../../engine/clock.ts';
import { Db } from '../../engine/db.ts';
import { foldLogLines } from '../../engine/log.ts';
import { SeededRng } from '../../engine/rng.ts';
import { buildReportJson, renderReport, type ReportInput } from '../../reports/render/index.ts';
import { runCheckers, strictRun, verdictOf } from '../checkers/index.ts';
import { checkerPlan } from '../checkers/from-scenario.ts';
import type { FinalState } from '../history.ts';
import { opKey } from '../load/op-key.ts';
import { createDatabase, dropDatabase } from '../postgres/databases.ts';
import { provisionPostgres } from '../postgres/provision.ts';
import { planScenario } from '../scenario.ts';
import { ComponentNodes } from '../runner/component-nodes.ts';
import { Fleet } from '../runner/fleet.ts';
import { LoadGenerator } from '../runner/generator.ts';
import { drainWhileSettling, nemesisFor } from '../runner/nemesis.ts';
import { harnessQueries } from '../runner/queries.ts';
import { HistoryRecorder } from '../runner/recorder.ts';
import { LinkNet } from '../runner/links.ts';
import { LINK_FAULTS } from '../faults/spec.ts';
import type { RunSampler } from '../runner/sampler.ts';
import type { RunOptions, RunResult } from '../runner/run.ts';
import { peerQueries } from './peer-common.ts';
import { splitByPromise } from './promises.ts';
import type { PeerAdapter, PeerProducer } from './types.ts';

/** How often the peer's queue is sampled (due jobs, oldest age): the oldest-age figures' resolution. */
const SAMPLE_EVERY_MS = 500;

/**
 * One scenario run against a peer engine: the same Postgres provisioning,
 * load plan (same seed, same arrivals), fault timeline and history as
 * stampede's runner (harness/runner/run.ts), with the peer's own workers as
 * real node processes (restarted when killed, as a supervisor would), the
 * peer's enqueue and the peer's tables for the drain and the final state; the
 * invariants the peer does not promise answer "not promised".
 */
export async function runPeerScenario(opts: RunOptions & { engine: PeerAdapter }): Promise<RunResult> {
  const { scenario: s, log, engine } = opts;
  const clock = systemClock;
  const startedAt = clock.now();
  const dir = opts.outDir ?? join('reports', s.name, `${engine.name}-seed${s.seed}-${startedAt.toString(36)}`);
  mkdirSync(dir, { recursive: true });
  const recorder = new HistoryRecorder(clock, startedAt, join(dir, 'history.jsonl'));
  const server = await provisionPostgres({ log: log.child('postgres'), exitOnSignals: false });
  const dbName = `stampede_peer_${s.seed}_${startedAt.toString(36)}`;
  let db: Db | undefined;
  let loadDb: Db | undefined;
  let fleet: Fleet | undefined;
  let producer: PeerProducer | undefined;
  let final: FinalState = { jobs: [], deadLetters: [], effects: {} };
  let generator: LoadGenerator | undefined;
  let links: LinkNet | undefined;
  let loadWindow = { fromT: 0, toT: 0 };
  const sampling = new AbortController();
  try {
    const url = await createDatabase(server.adminUrl, dbName);
    db = new Db({ connectionString: url, maxConnections: 8, applicationName: 'stampede:harness' });
    // A restart of the server terminates the pool's idle clients; the statements that fail are handled where they ran.
    db.pool.on('connect', (c) => c.on('error', () => {}));
    await db.query(harnessQueries.CreateHarnessTables);
    await db.query(peerQueries.CreatePeerTables);
    await engine.migrate(url, s);
    loadDb = new Db({ connectionString: url, maxConnections: 16, applicationName: 'stampede:load' });
    loadDb.pool.on('connect', (c) => c.on('error', () => {}));
    producer = await engine.producer(url, loadDb, s);
    const p = producer;
    const rng = new SeededRng(s.seed);
    const plan = planScenario(s, rng);
    if (s.faults.some((f) => LINK_FAULTS.has(f.fault))) {
      // As stampede's runner: a proxy per worker slot between the peer's worker and Postgres, for the link faults.
      links = new LinkNet(url, clock, rng.fork('links'));
      await links.start(s.workers);
    }
    const linkNet = links;
    fleet = new Fleet(s, url, recorder, clock, log.child('fleet'), s.seed, {}, linkNet ? (slot) => linkNet.workerUrl(slot) : undefined, (slot, gen) => engine.workerProcess(s, slot, gen));
    generator = new LoadGenerator(loadDb, clock, recorder, {
      maxInFlight: 64,
      lateMs: 100,
      maxAttempts: s.engine.maxAttempts,
      enqueue: (a) =>
        p.enqueue({
          queue: a.queue,
          payload: { kind: a.kind, op: a.op, params: a.params, key: opKey(a.op), hid: a.op },
          key: opKey(a.op),
          priority: a.priority,
          maxAttempts: s.engine.maxAttempts,
          ...(a.params.delayMs ? { delayMs: a.params.delayMs } : {}),
        }),
    });
    fleet.start();
    await Promise.race([
      Promise.all(Array.from({ length: s.workers }, (_, i) => fleet!.worker(i)?.ready)),
      clock.sleep(60_000).then(() => Promise.reject(new Error(`${engine.name} worker processes did not start within 60 s`))),
    ]);
    const sampler = sampleLoop(engine, db, recorder, sampling.signal);
    const { nemesis, faultsOver } = nemesisFor(
      s,
      plan.faults,
      {
        db,
        url,
        server,
        fleet,
        load: generator,
        // A peer run has no stampede components and no stampede sampler: no peer fault reads them (PEER_FAULTS).
        components: new ComponentNodes(s, url, recorder, clock, log, foldLogLines(), undefined),
        sampler: { latest: null } as unknown as RunSampler,
        recorder,
        clock,
        links,
        // Poison pills and herds go through the peer's own enqueue, into its tables.
        producer: p,
      },
      log.child('nemesis'),
      opts.interrupt,
    );
    recorder.record({ type: 'run:phase', node: 'harness', phase: 'load' });
    const loadStartT = recorder.now();
    await Promise.all([generator.run(plan.arrivals, loadStartT, opts.interrupt), nemesis.run(loadStartT)]);
    loadWindow = { fromT: loadStartT, toT: recorder.now() };
    recorder.record({ type: 'run:phase', node: 'harness', phase: 'drain' });
    const peerDb = db;
    await drainWhileSettling(s, nemesis, faultsOver, clock, opts.interrupt, async () =>
      (await engine.unfinished(peerDb).catch(() => ({ n: 1 }))).n === 0 ? true : undefined,
    );
    sampling.abort();
    await sampler;
  } catch (err) {
    if (!opts.interrupt.aborted) throw err;
    log.warn('interrupted', { error: (err as Error).message });
  } finally {
    sampling.abort();
    if (opts.interrupt.aborted) recorder.record({ type: 'run:phase', node: 'harness', phase: 'interrupted' });
    await fleet?.stop();
    await producer?.close().catch(() => {});
    await links?.close();
    if (db) final = await engine.readFinalState(db).catch((err) => (log.warn('could not read the final state', { error: (err as Error).message }), final));
    await db?.close();
    await loadDb?.close();
    await dropDatabase(server.adminUrl, dbName).catch(() => {});
    await server.stop();
  }

  recorder.record({ type: 'run:phase', node: 'harness', phase: 'check' });
  await recorder.close();
  const { names, bounds } = checkerPlan(s, { loadStartT: loadWindow.fromT });
  const { judged, notPromised } = splitByPromise(engine, names);
  const invariants = [...runCheckers(judged, recorder.events, final, bounds), ...notPromised];
  const interrupted = opts.interrupt.aborted;
  const v = verdictOf(invariants, { strict: strictRun() });
  const input: ReportInput = {
    scenario: { name: s.name, description: `${s.description} (engine: ${engine.name} ${engine.version()})` },
    seed: s.seed,
    replayCommand: opts.replayCommand,
    startedAt,
    finishedAt: clock.now(),
    interrupted,
    verdict: v.verdict,
    offeredRate: s.load.rate,
    achievedRate: (generator?.stats.acknowledged ?? 0) / Math.max(0.001, (loadWindow.toT - loadWindow.fromT) / 1000),
    history: recorder.events,
    final,
    invariants,
    thresholds: { oldestAgeSloMs: s.thresholds.oldestAgeSloMs, deadLetterDepth: s.thresholds.deadLetterDepthAlert },
  };
  writeFileSync(join(dir, 'final-state.json'), JSON.stringify(final));
  // The incident report reads stampede's own events where it has them; a peer's history lacks some, so its absence is not the run's failure.
  await renderReport(input, dir).catch((err) => log.warn('the incident report could not be rendered for this engine', { error: (err as Error).message }));
  return { verdict: interrupted ? 'interrupted' : v.verdict, exitCode: interrupted ? 130 : v.exitCode, dir, invariants, report: buildReportJson(input), history: recorder.events, final };
}

/** Samples the peer's queues until `signal` aborts: `sample` events with each queue's due depth and oldest age, as the oldest-age checkers read them. */
async function sampleLoop(engine: PeerAdapter, db: Db, recorder: HistoryRecorder, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    try {
      const s = await engine.sample(db);
      // The oldest-age checkers read the harness's own reading (`harness`): for a peer, the adapter's is it.
      const harness = { oldestUnclaimedAgeMs: s.oldestUnclaimedAgeMs, deadLetterDepth: 0, xminAgeMs: 0, queues: {}, done: 0 };
      recorder.record({ type: 'sample', node: 'harness', ...s, deadLetterDepth: 0, claimed: 0, done: 0, failed: 0, dead: 0, harness });
    } catch {
      // The server is restarting (a db-restart fault): no sample this round.
    }
    await systemClock.sleep(SAMPLE_EVERY_MS, signal).catch(() => {});
  }
}
