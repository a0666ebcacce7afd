import { systemClock, type Clock } from '../clock.ts';
import type { Db } from '../db.ts';
import { declareOptions, validateDeclared } from '../options/declare.ts';
import { Events } from '../events.ts';
import { createLogger, type Logger } from '../log.ts';
import { loadQueries } from '../sql.ts';
import { PeriodicLoop } from '../periodic.ts';

export const prunerQueries = loadQueries(new URL('./pruner.sql', import.meta.url), ['PruneEffectKeys', 'PruneDeliveredOutbox'] as const);
const q = prunerQueries;

export interface PrunerOptions {
  db: Db;
  /**
   * How long a dedup key and a delivered outbox row are kept, ms. The
   * trade-off: a replay of a job older than this is no longer recognised, and
   * its effect runs again. Keep it well above the longest time a job can be
   * redelivered (attempts x backoff cap + lease), and above how long an
   * upstream may resend with the same idempotency key. Default 7 days.
   */
  retentionMs?: number;
  /** Rows deleted per statement; short statements keep locks and WAL bursts small. Default 1,000. */
  batchSize?: number;
  /** Period between passes, ms. Default 60,000. */
  intervalMs?: number;
  clock?: Clock;
  events?: Events;
  log?: Logger;
}

/** The pruner's options, declared once (engine/options/declare.ts derives the rest). */
export const PRUNER = declareOptions<PrunerOptions>()(
  'Pruner',
  {
    retentionMs: {
      type: 'int', min: 1, unit: 'ms', default: 7 * 24 * 3600_000,
      doc: 'how long a dedup key and a delivered outbox row are kept',
      note: 'a replay of a job older than this runs its effect again: keep it above attempts x backoff cap + lease, and above how long an upstream may resend a key',
    },
    batchSize: { type: 'int', min: 1, unit: 'rows', default: 1_000, doc: 'rows deleted per statement; short statements keep locks and WAL bursts small' },
    intervalMs: { type: 'int', min: 1, unit: 'ms', default: 60_000, flag: 'prune-interval-ms', doc: 'period between prune passes' },
  },
  ['db', 'clock', 'events', 'log'],
);

export const PRUNER_DEFAULTS = PRUNER.defaults;
export const PRUNER_OPTIONS = PRUNER.names;

/**
 * Keeps the dedup store and the outbox from growing forever: deletes effect
 * keys and delivered outbox rows older than the retention, in batches, by
 * the database's clock. Safe on many nodes (SKIP LOCKED).
 */
export class Pruner {
  private readonly events: Events;
  private readonly loop: PeriodicLoop<{ effectKeys: number; outboxRows: number }>;

  constructor(private readonly options: PrunerOptions) {
    validateDeclared(PRUNER, options);
    this.events = options.events ?? new Events();
    this.loop = new PeriodicLoop({
      clock: options.clock ?? systemClock,
      log: options.log ?? createLogger('pruner'),
      what: 'prune pass',
      intervalMs: options.intervalMs ?? PRUNER.defaults.intervalMs,
      runOnce: () => this.runOnce(),
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One pass: deletes everything past the retention, batch by batch. Returns what it deleted. */
  async runOnce(): Promise<{ effectKeys: number; outboxRows: number }> {
    const retentionMs = this.options.retentionMs ?? PRUNER.defaults.retentionMs;
    const batch = this.options.batchSize ?? PRUNER.defaults.batchSize;
    const drain = async (sql: string) => {
      let total = 0;
      for (;;) {
        const n = (await this.options.db.query(sql, [retentionMs, batch])).rowCount ?? 0;
        total += n;
        if (n < batch) return total;
      }
    };
    const effectKeys = await drain(q.PruneEffectKeys);
    const outboxRows = await drain(q.PruneDeliveredOutbox);
    if (effectKeys + outboxRows > 0) this.events.emit('effects:pruned', { effectKeys, outboxRows });
    return { effectKeys, outboxRows };
  }
}
