import type { Clock } from '../clock.ts';
import type { Db } from '../db.ts';
import { ValidationError } from '../errors.ts';
import { createLogger, type Logger } from '../log.ts';
import type pg from 'pg';
import { asSubquery, loadQueries } from '../sql.ts';
import { checkOptions, declareOptions } from '../options/declare.ts';
import { refuseUnknownKeys } from '../validate.ts';
import type { StampedeMetrics } from './registry.ts';
import { readSharedRound, SamplerElection } from './sampler-election.ts';
import { observeQueueState } from './otel-metrics.ts';
import { buildSnapshot, EMPTY_QUEUE, type QueueStateSnapshot } from './queue-state-snapshot.ts';

export { EMPTY_QUEUE, type QueueFigures, type QueueStateSnapshot } from './queue-state-snapshot.ts';

const QUERY_NAMES = ['ClaimableByQueue', 'ClaimedByQueue', 'QueueControls', 'DeadLettersByQueue', 'JobsTableHealth', 'DoneExact', 'XminHorizon', 'LocalStatementTimeout'] as const;
/** The loaded queries of queue-state.sql; read at each call, so the harness's mutants can patch one (harness/mutants). Not part of engine/index.ts. */
export const queueStateQueries = loadQueries(new URL('./queue-state.sql', import.meta.url), QUERY_NAMES);
const q = queueStateQueries;

export interface QueueStateSamplerConfig {
  /** Time between samples, in ms. Default 5000. Each round is a handful of index probes per queue plus at most roundRowBudget counted rows. */
  intervalMs?: number;
  /**
   * Index entries a round may count, in all, whatever the backlog and the
   * number of queues. Default 30,000. Half goes to the claimable counts, a
   * quarter to the failed counts, a quarter to the dead-letter counts, each split
   * evenly over the queues; a queue whose count reaches its share is estimated
   * (`depthEstimated`, `deadLettersEstimated`; docs/metrics.md gives the
   * error). The oldest-unclaimed age and whether a queue has dead letters stay
   * exact whatever the budget.
   */
  roundRowBudget?: number;
  /**
   * Take part in the election of one sampler per database. Default false: this
   * sampler runs every round itself. When true, the sampler that holds the
   * sampling lock runs the rounds and writes each to
   * stampede.queue_state_rounds; the others publish that row (if it is younger
   * than two intervals) instead of running their own, so N samplers cost one
   * round per interval. Needs a dedicated connection per sampler.
   */
  elect?: boolean;
  /** Names this sampler in the shared round it leads (stampede.queue_state_rounds.leader). Default `sampler-<pid>`. */
  samplerId?: string;
  /**
   * How `done` is obtained. 'estimate' (default): n_live_tup less the counted
   * states, free at any size. 'exact': count(*) of done rows, a scan of the
   * whole table, only for small harness databases.
   */
  doneCount?: 'estimate' | 'exact';
  /** statement_timeout of each round (one statement), in ms. Default 2000: a sampler must never become the load. */
  statementTimeoutMs?: number;
}

/** The sampler's options, declared once (engine/options/declare.ts derives the rest). */
export const SAMPLER = declareOptions<QueueStateSamplerConfig>()(
  'QueueStateSampler',
  {
    intervalMs: { type: 'int', min: 100, unit: 'ms', default: 5_000, doc: 'time between rounds (at least 100)' },
    roundRowBudget: {
      type: 'int', min: 3, unit: 'rows', default: 30_000,
      doc: 'index entries a whole round may count, whatever the backlog and the number of queues',
      note: 'half for claimable counts, a quarter each for failed and dead letters, each split evenly over the queues; a queue past its share is estimated and marked (`stampede_queue_depth_estimated`). Replaces `depthCapRows` (a cap of 100,000 rows per queue), which is now refused by name',
    },
    elect: {
      type: 'boolean', default: false,
      doc: 'join the election of one sampler per database',
      note: 'the holder of the sampling lock runs the rounds and writes each to `stampede.queue_state_rounds`; the others publish that row when it is younger than two intervals. `stampede worker --sample-queue-state` sets it',
    },
    samplerId: {
      type: 'string', minLength: 1, maxLength: 200, default: `sampler-${process.pid}`, defaultText: '`sampler-<pid>`',
      doc: 'names the leader in the shared round (the worker id under `--sample-queue-state`)',
    },
    doneCount: { type: 'enum', values: ['estimate', 'exact'], default: 'estimate', doc: "'exact' counts done rows (a scan; small harness databases only); 'estimate' reads n_live_tup" },
    statementTimeoutMs: { type: 'int', min: 1, unit: 'ms', default: 2_000, doc: '`statement_timeout` of a round' },
  },
  [],
);

export const QUEUE_STATE_SAMPLER_DEFAULTS = SAMPLER.defaults;


/**
 * Samples queue state and Postgres health from the database on an interval
 * and caches the result in gauges and in `latest`. Scrapes read the cache, so
 * the database cost is one round per `intervalMs`, however often Prometheus
 * scrapes; with `elect`, one round per interval for all the samplers of a
 * database together (SamplerElection).
 *
 * Each round is one statement (roundQuery): one snapshot, so every figure
 * is true at the same instant and they add up, in one round trip, with no
 * snapshot held between statements while the process's event loop is busy
 * elsewhere (which would hold back VACUUM meanwhile). Its counted rows stay
 * under roundRowBudget whatever the backlog (queue-state.sql).
 */
export class QueueStateSampler {
  readonly config: Required<QueueStateSamplerConfig>;
  private readonly log: Logger;
  private abort: AbortController | null = null;
  private loop: Promise<void> | null = null;
  private readonly knownQueues = new Set<string>();
  private last: QueueStateSnapshot | null = null;
  private readonly election: SamplerElection | null;
  private ownRounds = 0;
  /** Stops the OpenTelemetry gauges that read `latest` (otel-metrics.ts); null without a MeterProvider. */
  private unobserve: (() => void) | null = null;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly metrics: StampedeMetrics | null = null,
    config: QueueStateSamplerConfig = {},
    logger: Logger = createLogger('metrics:sampler'),
  ) {
    this.config = validateConfig(config);
    this.log = logger;
    this.election = this.config.elect ? new SamplerElection(db, this.config.samplerId) : null;
  }

  /** The most recent successful sample, or null before the first. */
  get latest(): QueueStateSnapshot | null {
    return this.last;
  }

  /** Rounds this sampler ran itself (a follower in an election runs none). */
  get roundsRun(): number {
    return this.ownRounds;
  }

  /** 'alone' outside an election; inside one, whether this sampler holds the lock now. */
  get role(): 'alone' | 'leader' | 'follower' {
    if (!this.election) return 'alone';
    return this.election.isLeader ? 'leader' : 'follower';
  }

  /** Starts sampling every intervalMs (first round at once). Calling it twice is harmless. */
  start(): void {
    if (this.loop) return;
    const abort = new AbortController();
    this.abort = abort;
    this.unobserve = observeQueueState(() => this.last);
    this.loop = this.run(abort.signal);
  }

  /** Stops the loop and waits for an in-flight round; a leader gives up the lock. Calling it twice is harmless. */
  async stop(): Promise<void> {
    if (this.loop) {
      this.abort!.abort();
      await this.loop;
      this.loop = null;
      this.abort = null;
    }
    this.unobserve?.();
    this.unobserve = null;
    await this.election?.resign();
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.runOnce();
      } catch (err) {
        this.log.warn('queue-state sample failed; keeping the previous figures', { error: (err as Error).message });
      }
      try {
        await this.clock.sleep(this.config.intervalMs, signal);
      } catch {
        return;
      }
    }
  }

  /** The queries a round is made of, with their parameters, in order. For EXPLAIN in tests and for operators. */
  plannedQueries(): { name: (typeof QUERY_NAMES)[number]; text: string; params: unknown[] }[] {
    return [
      { name: 'ClaimableByQueue', text: q.ClaimableByQueue, params: this.roundParams() },
      { name: 'ClaimedByQueue', text: q.ClaimedByQueue, params: [] },
      { name: 'QueueControls', text: q.QueueControls, params: [] },
      { name: 'DeadLettersByQueue', text: q.DeadLettersByQueue, params: this.roundParams() },
      { name: 'JobsTableHealth', text: q.JobsTableHealth, params: [] },
      ...(this.config.doneCount === 'exact' ? [{ name: 'DoneExact' as const, text: q.DoneExact, params: [] }] : []),
      { name: 'XminHorizon', text: q.XminHorizon, params: [] },
    ];
  }

  /**
   * The round as one statement: each planned query's rows as one json column
   * named after it. Its one parameter, $1, is roundRowBudget (ClaimableByQueue's and DeadLettersByQueue's).
   */
  roundQuery(): string {
    return composeRound(this.plannedQueries());
  }

  /**
   * The statements that open a round's transaction. Bitmap scans are off for
   * the round: its counts stop at a LIMIT, which an index scan honours entry by
   * entry, while a bitmap index scan reads every entry of the queue before the
   * first row comes back. The planner picks the bitmap when the visibility map
   * is not set, which is right after a herd is inserted, exactly when the
   * backlog is largest: measured at 3,500 claimable rows, a budget of 18 rows
   * read 4,531 index entries that way. Nothing in the round wants a bitmap.
   */
  roundSettings(): { text: string; params?: unknown[] }[] {
    return [{ text: 'SET TRANSACTION READ ONLY' }, { text: q.LocalStatementTimeout, params: [this.config.statementTimeoutMs] }, { text: 'SET LOCAL enable_bitmapscan = off' }];
  }

  /** The round's parameters, for roundQuery. */
  roundParams(): unknown[] {
    return [this.config.roundRowBudget];
  }

  /**
   * One round: query (or, a follower in an election, read the leader's
   * round), update the gauges, return the snapshot. Throws if a query fails,
   * or if a follower finds no round younger than two intervals (the loop
   * logs and carries on).
   */
  async runOnce(): Promise<QueueStateSnapshot> {
    let snapshot: QueueStateSnapshot;
    try {
      snapshot = this.election ? await this.electedRound(this.election) : await this.ownRound((fn) => this.db.transaction(fn), null);
    } catch (err) {
      this.metrics?.sampleErrors.inc();
      throw err;
    }
    this.last = snapshot;
    this.publish(snapshot);
    return snapshot;
  }

  private async electedRound(election: SamplerElection): Promise<QueueStateSnapshot> {
    const leader = await election.lead().catch(async (err) => {
      await election.resign();
      throw err;
    });
    if (!leader) {
      const maxAgeMs = 2 * this.config.intervalMs;
      const shared = await readSharedRound(this.db, maxAgeMs);
      if (!shared) throw new Error(`no shared queue-state round younger than ${maxAgeMs} ms: another sampler holds the sampling lock but has not written one`);
      return shared.snapshot;
    }
    try {
      const snapshot = await this.ownRound((fn) => inTransaction(leader, fn), election.samplerId);
      await election.share(snapshot);
      return snapshot;
    } catch (err) {
      // Whatever failed, the lock goes with the connection: another sampler may do better from its next round.
      await election.resign();
      throw err;
    }
  }

  private async ownRound(transaction: <T>(fn: (tx: pg.ClientBase) => Promise<T>) => Promise<T>, leader: string | null): Promise<QueueStateSnapshot> {
    const started = this.clock.now();
    const rows = await transaction(async (tx) => {
      // A transaction only to scope the settings and forbid writes; the round is one statement, so one snapshot.
      for (const setting of this.roundSettings()) await tx.query(setting.text, setting.params);
      return (await tx.query(this.roundQuery(), this.roundParams())).rows[0] as Record<string, any[]>;
    });
    this.ownRounds++;
    const finished = this.clock.now();
    return { ...buildSnapshot(rows, finished, finished - started), source: 'own', leader };
  }

  private publish(s: QueueStateSnapshot): void {
    const m = this.metrics;
    if (!m) return;
    // A queue that emptied keeps reporting 0 rather than vanishing, so its
    // alert resolves instead of going stale.
    for (const name of Object.keys(s.queues)) this.knownQueues.add(name);
    for (const queue of this.knownQueues) {
      const f = s.queues[queue] ?? EMPTY_QUEUE;
      m.queueDepth.set({ queue, state: 'pending' }, f.pending);
      m.queueDepth.set({ queue, state: 'failed' }, f.failed);
      m.queueDepth.set({ queue, state: 'claimed' }, f.claimed);
      m.queueDue.set({ queue }, f.due);
      m.queueDepthEstimated.set({ queue }, f.depthEstimated ? 1 : 0);
      m.queueDepthCapped.set({ queue }, f.depthEstimated ? 1 : 0);
      m.deadLetterDepthEstimated.set({ queue }, f.deadLettersEstimated ? 1 : 0);
      m.oldestUnclaimedAge.set({ queue }, f.oldestUnclaimedAgeMs / 1000);
      m.leasesOverdue.set({ queue }, f.leasesOverdue);
      m.deadLetterDepth.set({ queue }, f.deadLetters);
      m.queuePaused.set({ queue }, f.paused ? 1 : 0);
      m.queueHeldBackByLimit.set({ queue }, f.heldBackByLimit);
      // A limit that was removed stops being reported rather than reading as 0 (which would mean "nothing may run").
      if (f.maxInFlight === null) m.queueInFlightLimit.remove({ queue });
      else m.queueInFlightLimit.set({ queue }, f.maxInFlight);
      if (f.maxStartsPerSecond === null) m.queueStartRateLimit.remove({ queue });
      else m.queueStartRateLimit.set({ queue }, f.maxStartsPerSecond);
    }
    m.doneEstimate.set(s.done);
    m.jobsDeadTuples.set(s.jobsDeadTuples);
    m.jobsLiveTuples.set(s.jobsLiveTuples);
    m.sampleTimestamp.set(s.sampledAt / 1000);
    m.sampleDuration.set(s.durationMs / 1000);
    for (const h of s.xminHolders) {
      // A slot has no timestamp: its age is known in xids only.
      if (h.ageMs !== null || h.holder !== 'replication_slot') m.xminHorizonAgeSeconds.set({ holder: h.holder }, (h.ageMs ?? 0) / 1000);
      m.xminHorizonAgeXids.set({ holder: h.holder }, h.ageXids);
    }
  }
}


/** Named queries as one statement, each one's rows a json column named after it (the bench composes its baseline round this way). */
export function composeRound(queries: readonly { name: string; text: string }[]): string {
  const columns = queries.map((p) => `(SELECT coalesce(json_agg(r), '[]'::json) FROM ${asSubquery(p.text)} r) AS "${p.name}"`);
  return `-- queue-state round\nSELECT ${columns.join(',\n       ')}`;
}

/** Runs `fn` in one transaction on a dedicated client (the elected sampler's): COMMIT if it resolves, ROLLBACK if it throws. */
async function inTransaction<T>(client: pg.ClientBase, fn: (tx: pg.ClientBase) => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}


/** depthCapRows (a per-queue cap) gave way to roundRowBudget (a whole round's): refused by name rather than ignored. */
export function refuseDepthCapRows(config: object): void {
  if ('depthCapRows' in config) {
    throw new ValidationError('depthCapRows', 'was replaced by roundRowBudget, the rows a whole round may count (default 30,000); see docs/configuration.md');
  }
}

function validateConfig(config: QueueStateSamplerConfig): Required<QueueStateSamplerConfig> {
  refuseDepthCapRows(config);
  refuseUnknownKeys(config, SAMPLER.names, (k) => k, 'a QueueStateSampler option');
  checkOptions(SAMPLER, config);
  return { ...SAMPLER.defaults, ...stripUndefined(config) } as Required<QueueStateSamplerConfig>;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
