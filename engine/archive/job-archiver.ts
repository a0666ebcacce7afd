import { systemClock, type Clock } from '../clock.ts';
import type { Db } from '../db.ts';
import { declareOptions, validateDeclared } from '../options/declare.ts';
import { createLogger, type Logger } from '../log.ts';
import { loadQueries } from '../sql.ts';

export const archiveQueries = loadQueries(new URL('./archive.sql', import.meta.url), ['CreatePartitions', 'DropPartitions', 'ArchiveBatch'] as const);
const q = archiveQueries;

export interface JobArchiverOptions {
  db: Db;
  /** See ARCHIVER (below) for each one's meaning and default. */
  archiveAfterMs?: number;
  batchSize?: number;
  maxBatchesPerRun?: number;
  intervalMs?: number;
  retentionDays?: number;
  partitionsAheadDays?: number;
  clock?: Clock;
  log?: Logger;
  /** Called after every pass of the loop, with what it did (tests wait on this, not on sleeps). */
  onPass?: (result: ArchivePass) => void;
}

export interface ArchivePass {
  /** Done jobs moved from stampede.jobs to stampede.job_history. */
  moved: number;
  /** Batches run (the last one short, unless maxBatchesPerRun stopped the pass). */
  batches: number;
  partitionsCreated: string[];
  partitionsDropped: string[];
}

/** The archiver's options, declared once (engine/options/declare.ts derives the rest). */
export const ARCHIVER = declareOptions<JobArchiverOptions>()(
  'JobArchiver',
  {
    archiveAfterMs: {
      type: 'int', min: 0, unit: 'ms', default: 60 * 60_000, flag: 'archive-after-ms',
      doc: 'archive a done job this long after it finished',
      note: 'also the idempotency window: once a job is archived, enqueueing its key again creates a new job',
    },
    retentionDays: { type: 'int', min: 1, unit: 'days', default: 7, flag: 'retention-days', doc: 'keep this many whole days (UTC) of history; older day partitions are dropped' },
    batchSize: { type: 'int', min: 1, unit: 'rows', default: 5_000, flag: 'batch-size', doc: 'jobs moved per transaction' },
    maxBatchesPerRun: { type: 'int', min: 1, unit: 'batches', default: 50, doc: 'batches per pass at most, so one pass cannot hold the loop (or the WAL) for long' },
    intervalMs: { type: 'int', min: 1, unit: 'ms', default: 60_000, flag: 'interval-ms', doc: 'period between passes' },
    partitionsAheadDays: { type: 'int', min: 1, unit: 'days', default: 2, doc: 'day partitions created ahead of today, so midnight never finds no partition' },
  },
  ['db', 'clock', 'log', 'onPass'],
);

/** Defaults of the archiver, from its declaration; units in the names. */
export const ARCHIVE_DEFAULTS = ARCHIVER.defaults;
export const ARCHIVER_OPTIONS = ARCHIVER.names;

/**
 * Keeps the hot table small: moves done jobs older than archiveAfterMs into
 * stampede.job_history (partitioned by day), creates the day partitions
 * ahead, and drops the ones past retentionDays. Dead jobs are never moved.
 * Any number of archivers may run (SKIP LOCKED splits the rows); a failed
 * pass is logged and the next one carries on, and a failed batch moves
 * nothing (one statement).
 */
export class JobArchiver {
  private readonly o: Required<Omit<JobArchiverOptions, 'onPass' | 'clock' | 'log'>>;
  private readonly clock: Clock;
  private readonly log: Logger;
  private running = false;
  private stopRequested = false;
  private loop?: Promise<void>;
  private stopController = new AbortController();

  constructor(private readonly options: JobArchiverOptions) {
    validateDeclared(ARCHIVER, options); // before anything touches the database
    this.o = { ...ARCHIVE_DEFAULTS, ...stripUndefined(options) } as typeof this.o;
    this.clock = options.clock ?? systemClock;
    this.log = options.log ?? createLogger('archiver');
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopRequested = false;
    this.stopController = new AbortController();
    this.loop = this.run();
  }

  /** Stops the loop after the batch in flight. Safe to call twice, or before start(). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopRequested = true;
    this.stopController.abort();
    await this.loop;
  }

  /** One pass: partitions ahead, then batches of moves, then retention. */
  async runOnce(): Promise<ArchivePass> {
    const { db } = this.options;
    const created: string[] = (await db.query(q.CreatePartitions, [this.o.partitionsAheadDays])).rows[0].created;
    let moved = 0;
    let batches = 0;
    while (batches < this.o.maxBatchesPerRun) {
      const n: number = (await db.query(q.ArchiveBatch, [this.o.archiveAfterMs, this.o.batchSize])).rows[0].moved;
      batches++;
      moved += n;
      if (n < this.o.batchSize || this.stopRequested) break;
    }
    const dropped: string[] = (await db.query(q.DropPartitions, [this.o.retentionDays])).rows[0].dropped;
    if (moved || created.length || dropped.length) {
      this.log.info('archive pass', { moved, batches, created: created.length, dropped: dropped.length });
    }
    return { moved, batches, partitionsCreated: created, partitionsDropped: dropped };
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        const pass = await this.runOnce();
        try {
          this.options.onPass?.(pass);
        } catch (err) {
          this.log.warn('onPass listener threw', { error: String(err) });
        }
      } catch (err) {
        this.log.warn('archive pass failed; will retry', { error: (err as Error).message });
      }
      await this.clock.sleep(this.o.intervalMs, this.stopController.signal).catch(() => {});
    }
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
