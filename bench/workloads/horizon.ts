import type pg from 'pg';
import { systemClock } from '../../engine/clock.ts';
import { Db } from '../../engine/db.ts';
import { JobArchiver } from '../../engine/archive/job-archiver.ts';
import { createLogger } from '../../engine/log.ts';
import { loadQueries } from '../../engine/sql.ts';
import type { BenchContext } from '../context.ts';
import { wallMs, WorkerChild } from '../proc.ts';
import { percentile } from '../stats.ts';
import { configById, FAMILIES } from '../systems/configs.ts';
import { connect } from '../systems/util.ts';
import { offerOpenLoop, type Offered } from './offer.ts';

const q = loadQueries(new URL('../horizon.sql', import.meta.url), ['HotTableState', 'LockWaits', 'HorizonAge', 'ReaderHold', 'StockAutovacuum'] as const);

/**
 * One way of running a system in the horizon workload: a bench config (its worker child) and what is done
 * around it. The stampede variants are the "before" and "after" of what stampede does about a held horizon.
 */
export interface HorizonConfig {
  id: string;
  /** The bench config (systems/configs.ts) whose worker child runs the jobs. */
  system: string;
  label: string;
  /** Run once on the fresh database before the clock starts. */
  setup?: (db: pg.ClientBase) => Promise<void>;
  /** Runs beside the worker for the whole window (the archiver), stopped at its end. */
  sidecar?: (url: string) => { stop(): Promise<void> };
}

export const HORIZON_CONFIGS: HorizonConfig[] = [
  { id: 'stampede', system: 'stampede', label: 'stampede defaults (partial due index, hot-table autovacuum settings, claim-ahead growing while backed up, no archiver)' },
  {
    id: 'stampede-stock-autovacuum',
    system: 'stampede',
    label: "stampede with the server's autovacuum defaults for the hot table (before migrations 0006/0014)",
    setup: async (c) => void (await c.query(q.StockAutovacuum)),
  },
  {
    id: 'stampede-archiver',
    system: 'stampede',
    label: 'stampede defaults + the archiver (done jobs moved out after 60 s, a pass every 10 s)',
    sidecar: (url) => {
      const db = new Db({ connectionString: url, maxConnections: 2, applicationName: 'stampede:bench-archiver' });
      const archiver = new JobArchiver({ db, archiveAfterMs: 60_000, intervalMs: 10_000, log: createLogger('bench:archiver', 'warn') });
      archiver.start();
      return { stop: async () => (await archiver.stop(), await db.close()) };
    },
  },
  {
    // The claim's batch: each claim steps over the due index's entries that the held horizon keeps, so fewer,
    // larger claims read them fewer times (graphile-worker batched fetches up to 500 at once).
    id: 'stampede-c500',
    system: 'stampede-c500',
    label: 'stampede at concurrency 500 (claim-ahead 500: up to 500 jobs a claim)',
  },
  {
    // The "before" of the claim-ahead buffer that grows with a backlog (engine/worker/claim-ahead.ts).
    id: 'stampede-ca10',
    system: 'stampede-ca10',
    label: 'stampede at concurrency 10, claim-ahead set to 10 (claims of 10: the defaults before the buffer grew with a backlog)',
  },
  {
    // The same claims as stampede-c500 with the default 10 handlers: is the batch alone enough?
    id: 'stampede-ca500',
    system: 'stampede-ca500',
    label: 'stampede at concurrency 10, claim-ahead 500 (claims of up to 510)',
  },
  { id: 'graphile-batched', system: 'graphile-batched', label: 'graphile-worker, its performance settings (concurrency 24, local queue 500, batched completion)' },
  { id: 'pgboss-batch-notify', system: 'pgboss-batch-notify', label: 'pg-boss, batchSize 50, burst, LISTEN/NOTIFY' },
];

export function horizonConfigById(id: string): HorizonConfig | undefined {
  return HORIZON_CONFIGS.find((c) => c.id === id);
}

/** The published profile's shape (docs/horizon.md): the rate, and three readers of 120 s each, overlapping. */
export interface HorizonShape {
  ratePerSec: number;
  /**
   * The arrivals of each tick of this many ms go in one bulk enqueue (one commit). One enqueue per job, the
   * peers' commits, each carrying a NOTIFY, queue on the server-wide lock a notifying commit holds through its
   * WAL flush: on the shared machine graphile-worker and pg-boss committed 124-143 jobs/s of the 800, so the
   * workload measured their enqueue, not the horizon.
   */
  batchMs: number;
  minutes: number;
  readers: number;
  readerHoldS: number;
}

export interface HorizonMinute {
  /** 1-based: the figures at the end of this minute (backlog, table) or over it (latency, lock waits). */
  minute: number;
  /** Enqueues committed less jobs handled, at the end of the minute. */
  backlog: number;
  /** Due-to-start p99 of the jobs due in this minute that ran before the end of the run, ms (claim latency, enqueue included). */
  p99Ms: number | null;
  /** Jobs due in this minute that had not started when the run ended (not in p99Ms). */
  notStarted: number;
  /** Longest lock wait seen in the minute (samples every 250 ms), ms, and the samples that saw any waiter. */
  lockWaitMaxMs: number;
  lockWaitSamples: number;
  deadTuples: number;
  tableBytes: number;
  indexBytes: number;
  /** Oldest snapshot of the database at the end of the minute, s: the readers' hold. */
  horizonAgeS: number;
}

export interface HorizonRun {
  id: string;
  label: string;
  offered: Offered & { offeredPerSec: number };
  handled: number;
  minutes: HorizonMinute[];
  /** Reader transactions completed (each held its snapshot `readerHoldS`). */
  readerHolds: number;
}

export interface HorizonResult extends HorizonShape {
  runs: HorizonRun[];
}

const SAMPLE_MS = 250;

/**
 * The held-horizon profile (issue 42): `ratePerSec` offered open-loop for
 * `minutes`, one worker process, while `readers` REPEATABLE READ transactions
 * of `readerHoldS` each, started `readerHoldS / readers` apart and each
 * begun again as soon as it ends, keep the database's xmin horizon between
 * (readers - 1) / readers and 1 of a hold old: VACUUM may remove nothing
 * newer. Per minute: backlog, claim latency p99, lock waits, and the hot
 * table's dead tuples and size. Each config gets a fresh database; `onRun` is
 * called after each, so a long run's finished configs are written before the
 * next one starts.
 */
export async function runHorizon(ctx: BenchContext, ids: string[], shape: HorizonShape, onRun: (r: HorizonResult) => Promise<void> | void): Promise<HorizonResult> {
  const result: HorizonResult = { ...shape, runs: [] };
  for (const id of ids) {
    const config = horizonConfigById(id)!;
    result.runs.push(await runOne(ctx, config, shape));
    await onRun(result);
  }
  return result;
}

async function runOne(ctx: BenchContext, config: HorizonConfig, shape: HorizonShape): Promise<HorizonRun> {
  const system = configById(config.system);
  const family = FAMILIES[system.family];
  const db = await ctx.freshDatabase(system);
  const child = new WorkerChild(system.id, db.url);
  const monitor = await connect(db.url);
  const stop = new AbortController();
  try {
    if (config.setup) await config.setup(monitor);
    const producer = await family.producer(db.url, system.settings, 10);
    await child.ready();
    await child.go(SAMPLE_MS);
    const sidecar = config.sidecar?.(db.url);
    const t0 = wallMs() + 50;
    const total = Math.round(shape.ratePerSec * shape.minutes * 60);
    const progress = { committed: 0 };
    const readers = Array.from({ length: shape.readers }, (_, k) => holdHorizon(db.url, t0 + (k * shape.readerHoldS * 1000) / shape.readers, shape.readerHoldS * 1000, stop.signal));
    const watching = watch(monitor, family.hotTable, t0, shape.minutes, () => progress.committed - child.count, stop.signal);
    const offered = await offerOpenLoop(producer, shape.ratePerSec, total, t0, (_, t) => ({ t }), progress, shape.batchMs);
    const minutes = await watching;
    stop.abort();
    const readerHolds = (await Promise.all(readers)).reduce((a, b) => a + b, 0);
    await sidecar?.stop();
    const handled = child.count;
    const { latenciesMs, dueAtMs } = await child.stop();
    await producer.close();
    fillLatencies(minutes, t0, latenciesMs, dueAtMs, shape.ratePerSec);
    ctx.log.info('horizon', { config: config.id, offered: total, committed: offered.committed, shed: offered.shed, handled, readerHolds });
    return { id: config.id, label: config.label, offered: { ...offered, offeredPerSec: shape.ratePerSec }, handled, minutes, readerHolds };
  } finally {
    stop.abort();
    child.kill();
    await monitor.end().catch(() => {});
    await db.drop();
  }
}

/**
 * One reader: from `startAt`, REPEATABLE READ transactions of `holdMs` back to back until `signal`; returns how
 * many it completed. Its own connection, as an analytics client would have.
 */
async function holdHorizon(url: string, startAt: number, holdMs: number, signal: AbortSignal): Promise<number> {
  const client = await connect(url);
  let holds = 0;
  try {
    await systemClock.sleep(Math.max(0, startAt - wallMs()), signal).catch(() => {});
    while (!signal.aborted) {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      const began = wallMs();
      do await client.query(q.ReaderHold);
      while (wallMs() - began < holdMs && !signal.aborted);
      await client.query('COMMIT');
      if (wallMs() - began >= holdMs) holds++;
    }
    return holds;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Samples lock waits every SAMPLE_MS and the table at the end of each minute, until `minutes` have passed from t0. */
async function watch(c: pg.ClientBase, hotTable: string, t0: number, minutes: number, backlog: () => number, signal: AbortSignal): Promise<HorizonMinute[]> {
  const out: HorizonMinute[] = [];
  for (let m = 1; m <= minutes && !signal.aborted; m++) {
    let lockWaitMaxMs = 0;
    let lockWaitSamples = 0;
    const end = t0 + m * 60_000;
    while (wallMs() < end && !signal.aborted) {
      const [w] = (await c.query<{ waiting: number; longest_ms: number }>(q.LockWaits)).rows;
      if (w.waiting > 0) lockWaitSamples++;
      lockWaitMaxMs = Math.max(lockWaitMaxMs, w.longest_ms);
      await systemClock.sleep(Math.max(0, Math.min(SAMPLE_MS, end - wallMs())), signal).catch(() => {});
    }
    const [t] = (await c.query<{ dead_tuples: string; table_bytes: string; index_bytes: string }>(q.HotTableState, [hotTable])).rows;
    const [h] = (await c.query<{ age_s: number }>(q.HorizonAge)).rows;
    out.push({
      minute: m,
      backlog: backlog(),
      p99Ms: null,
      notStarted: 0,
      lockWaitMaxMs,
      lockWaitSamples,
      deadTuples: Number(t.dead_tuples),
      tableBytes: Number(t.table_bytes),
      indexBytes: Number(t.index_bytes),
      horizonAgeS: h.age_s,
    });
  }
  return out;
}

/** Per minute of due time: the p99 of the jobs that started, and how many of the offered ones did not. Pure but for `minutes`. */
export function fillLatencies(minutes: HorizonMinute[], t0: number, latenciesMs: number[], dueAtMs: number[], ratePerSec: number): void {
  const byMinute = minutes.map(() => [] as number[]);
  latenciesMs.forEach((ms, i) => byMinute[Math.floor((dueAtMs[i] - t0) / 60_000)]?.push(ms));
  minutes.forEach((m, i) => {
    m.p99Ms = byMinute[i].length ? percentile(byMinute[i], 99) : null;
    m.notStarted = Math.max(0, ratePerSec * 60 - byMinute[i].length);
  });
}
