import type { Clock } from '../clock.ts';
import type { Db } from '../db.ts';
import { enqueueMany, type BulkJob } from '../enqueue.ts';
import { ValidationError } from '../errors.ts';
import type { Events } from '../events.ts';
import { createLogger, type Logger } from '../log.ts';
import { loadQueries } from '../sql.ts';
import { declareOptions, validateDeclared } from '../options/declare.ts';
import { parseCron } from './expression.ts';
import { occurrenceKey, type OccurrenceRule } from './occurrences.ts';
import { validateDstPolicy } from './policy.ts';
import { scheduleFromRow, type Schedule } from './schedule.ts';
import { cronStrategies } from './strategies.ts';
import { validateTimeZone } from './zone.ts';

/** The loaded queries of materializer.sql; read at each call, so the harness's mutants can patch one (harness/mutants). Not part of engine/index.ts. */
export const materializerQueries = loadQueries(new URL('./materializer.sql', import.meta.url), ['DbNow', 'EnabledSchedules', 'AdvanceProgress'] as const);
const q = materializerQueries;

/** The longest catch-up window a node accepts: a week of occurrences is the most a restart should replay. */
export const MAX_CATCH_UP_WINDOW_MS = 7 * 86_400_000;

export interface CronMaterializerConfig {
  db: Db;
  /** Names this node in events and logs. */
  nodeId: string;
  /** The node clock; occurrences are computed from it. */
  clock: Clock;
  events: Events;
  /** Default 5,000 ms. */
  tickMs?: number;
  /** Default 60,000 ms. */
  lookaheadMs?: number;
  /** Default 30,000 ms. */
  maxSkewMs?: number;
  /** Default 3,600,000 ms (one hour). */
  catchUpWindowMs?: number;
  /**
   * Reads the database clock in epoch ms. Default `SELECT now()`. Tests
   * replace it because a real server's now() cannot be moved.
   */
  dbNow?: () => Promise<number>;
  log?: Logger;
}

export interface ScheduleTick {
  scheduleId: string;
  /** Occurrences this node enqueued (or found already enqueued by another node). */
  occurrences: number;
  /** Rows this node inserted; the rest collapsed onto rows another node had made. */
  inserted: number;
  /** Missed occurrences the catch-up policy declined. */
  dropped: number;
}

export interface TickResult {
  /** Node clock minus database clock, in ms. */
  skewMs: number;
  refused: boolean;
  schedules: ScheduleTick[];
}

interface Planned {
  schedule: Schedule;
  jobs: BulkJob[];
  untilMs: number;
  dropped: number;
}

/** The materializer's options, declared once (engine/options/declare.ts derives the rest). */
export const CRON = declareOptions<CronMaterializerConfig>()(
  'CronMaterializer',
  {
    tickMs: { type: 'int', min: 1, unit: 'ms', default: 5_000, flag: 'tick-ms', doc: 'how often a node materializes' },
    lookaheadMs: {
      type: 'int', min: 1, unit: 'ms', default: 60_000, flag: 'lookahead-ms',
      doc: 'write occurrences this far ahead of the node clock', note: 'must exceed tickMs + maxSkewMs',
    },
    maxSkewMs: {
      type: 'int', min: 0, unit: 'ms', default: 30_000, flag: 'max-skew-ms',
      doc: "refuse to schedule when this node's clock is further than this from the database's",
    },
    catchUpWindowMs: {
      type: 'int', min: 0, max: MAX_CATCH_UP_WINDOW_MS, unit: 'ms', default: 60 * 60_000, flag: 'catch-up-window-ms',
      doc: "how far back missed occurrences are caught up, per each schedule's policy (`all`, `latest`)",
    },
  },
  ['db', 'nodeId', 'clock', 'events', 'dbNow', 'log'],
);

/** Defaults of CronMaterializerConfig, from its declaration. */
export const CRON_DEFAULTS = CRON.defaults;
export const MATERIALIZER_OPTIONS = CRON.names;

/**
 * Turns due cron occurrences into job rows, on every node that runs one.
 * Correctness needs no leader: each occurrence's idempotency key is derived
 * from the schedule and the instant, so nodes that compute the same
 * occurrence collapse onto one row, and per-schedule progress only moves
 * forward, in the transaction that wrote the rows.
 */
export class CronMaterializer {
  readonly nodeId: string;
  readonly tickMs: number;
  readonly lookaheadMs: number;
  readonly maxSkewMs: number;
  readonly catchUpWindowMs: number;
  private readonly clock: Clock;
  private readonly events: Events;
  private readonly readDbNow: () => Promise<number>;
  private readonly log: Logger;
  private skew: number | null = null;
  private abort: AbortController | null = null;
  private loop: Promise<void> | null = null;
  /** Validated rules by schedule id, re-validated only when the row's cron, zone or policy changes. */
  private readonly rules = new Map<string, { signature: string; rule: OccurrenceRule }>();
  /** Broken schedule rows already logged, so a broken row is logged once, not every tick. */
  private readonly reportedInvalid = new Set<string>();

  private readonly db: Db;

  constructor(config: CronMaterializerConfig) {
    validateDeclared(CRON, config);
    this.db = config.db;
    if (typeof config.nodeId !== 'string' || config.nodeId === '') throw new ValidationError('nodeId', 'expected a non-empty string');
    this.nodeId = config.nodeId;
    this.clock = config.clock;
    this.events = config.events;
    this.tickMs = config.tickMs ?? CRON.defaults.tickMs;
    this.lookaheadMs = config.lookaheadMs ?? CRON.defaults.lookaheadMs;
    this.maxSkewMs = config.maxSkewMs ?? CRON.defaults.maxSkewMs;
    this.catchUpWindowMs = config.catchUpWindowMs ?? CRON.defaults.catchUpWindowMs;
    // A node behind by the whole tolerance must still write each row before it
    // is due, on a tick that may come tickMs late.
    if (this.lookaheadMs <= this.tickMs + this.maxSkewMs) {
      throw new ValidationError(
        'lookaheadMs',
        `${this.lookaheadMs} must exceed tickMs + maxSkewMs (${this.tickMs} + ${this.maxSkewMs}) so a node behind by the tolerance still materializes each occurrence before it is due`,
      );
    }
    this.readDbNow = config.dbNow ?? (async () => ((await this.db.query(q.DbNow)).rows[0].now as Date).getTime());
    this.log = config.log ?? createLogger(`cron:${this.nodeId}`);
  }

  /** Node clock minus database clock at the last tick, in ms; null before the first. The metrics gauge stampede_clock_skew_seconds reads it. */
  get clockSkewMs(): number | null {
    return this.skew;
  }

  /** Starts the tick loop. Calling it while running does nothing. */
  start(): void {
    if (this.loop) return;
    const abort = (this.abort = new AbortController());
    this.loop = (async () => {
      while (!abort.signal.aborted) {
        try {
          await this.runOnce();
        } catch (err) {
          this.log.error('tick failed; trying again next tick', { error: (err as Error).message });
        }
        await this.clock.sleep(this.tickMs, abort.signal).catch(() => {});
      }
    })();
  }

  /** Stops the loop and waits for a tick in flight. Calling it when stopped does nothing. */
  async stop(): Promise<void> {
    if (!this.loop) return;
    this.abort!.abort();
    await this.loop;
    this.loop = null;
    this.abort = null;
  }

  /** One tick: measure skew, refuse above tolerance, else materialize every enabled schedule up to the horizon. */
  async runOnce(): Promise<TickResult> {
    const before = this.clock.now();
    const dbNow = await this.readDbNow();
    const nowMs = this.clock.now();
    const skewMs = (before + nowMs) / 2 - dbNow;
    this.skew = skewMs;
    if (Math.abs(skewMs) > this.maxSkewMs) {
      const reason = `node clock is ${Math.round(skewMs)} ms off the database clock; the tolerance is ${this.maxSkewMs} ms`;
      // In whole seconds, so the warning a refusing node repeats every tick folds into one line (engine/log.ts).
      const offS = Math.round(Math.abs(skewMs) / 1000);
      this.log.warn('refusing to materialize', { clock: `node clock ${offS} s ${skewMs > 0 ? 'ahead of' : 'behind'} the database`, toleranceS: this.maxSkewMs / 1000 });
      this.events.emit('cron:refused', { nodeId: this.nodeId, reason, skewMs });
      return { skewMs, refused: true, schedules: [] };
    }
    const planned: Planned[] = [];
    const seen = new Set<string>();
    for (const row of (await this.db.query(q.EnabledSchedules)).rows) {
      const schedule = scheduleFromRow(row);
      seen.add(schedule.id);
      const p = this.plan(schedule, nowMs, dbNow, skewMs);
      if (p) planned.push(p);
    }
    for (const id of this.rules.keys()) if (!seen.has(id)) this.rules.delete(id);
    const inserted = await this.write(planned);
    const out: ScheduleTick[] = [];
    for (const p of planned) {
      const tick = { scheduleId: p.schedule.id, occurrences: p.jobs.length, inserted: inserted.get(p.schedule.id) ?? 0, dropped: p.dropped };
      if (tick.dropped > 0) {
        this.log.info('catch-up policy dropped missed occurrences', { schedule: tick.scheduleId, policy: p.schedule.catchUp, dropped: tick.dropped });
      }
      if (tick.occurrences > 0) {
        this.events.emit('cron:materialized', { scheduleId: tick.scheduleId, occurrences: tick.occurrences, inserted: tick.inserted, nodeId: this.nodeId });
      }
      out.push(tick);
    }
    return { skewMs, refused: false, schedules: out };
  }

  private ruleOf(schedule: Schedule): OccurrenceRule {
    const signature = `${schedule.cron}\u0000${schedule.timezone}\u0000${schedule.dstPolicy}`;
    const cached = this.rules.get(schedule.id);
    if (cached?.signature === signature) return cached.rule;
    const rule = { spec: parseCron(schedule.cron), timezone: validateTimeZone(schedule.timezone), dstPolicy: validateDstPolicy(schedule.dstPolicy) };
    this.rules.set(schedule.id, { signature, rule });
    return rule;
  }

  private plan(schedule: Schedule, nowMs: number, dbNowMs: number, skewMs: number): Planned | null {
    let rule: OccurrenceRule;
    try {
      rule = this.ruleOf(schedule);
    } catch (err) {
      // Written around the API (plain SQL); refuse that schedule, keep the others going.
      const reason = `schedule ${schedule.id} is invalid: ${(err as Error).message}`;
      // Logged once per broken version of the row, not every tick; the event still fires each tick.
      const signature = `${schedule.id}\u0000${schedule.cron}\u0000${schedule.timezone}\u0000${schedule.dstPolicy}`;
      if (!this.reportedInvalid.has(signature)) {
        this.reportedInvalid.add(signature);
        this.log.error(reason);
      }
      this.events.emit('cron:refused', { scheduleId: schedule.id, nodeId: this.nodeId, reason, skewMs });
      return null;
    }
    const plan = cronStrategies.dueOccurrences(rule, {
      fromMs: schedule.lastMaterializedUntil.getTime(),
      dbNowMs,
      horizonMs: nowMs + this.lookaheadMs,
      catchUp: schedule.catchUp,
      catchUpWindowMs: this.catchUpWindowMs,
    });
    if (plan.untilMs <= schedule.lastMaterializedUntil.getTime()) return null;
    const jobs = plan.enqueue.map((t) => {
      const key = occurrenceKey(schedule.id, t);
      return {
        queue: schedule.queue,
        payload: { ...schedule.payload, cron: { scheduleId: schedule.id, occurrence: new Date(t).toISOString() } },
        options: {
          runAt: new Date(t),
          priority: schedule.priority,
          idempotencyKey: key,
          ...(schedule.maxAttempts === null ? {} : { maxAttempts: schedule.maxAttempts }),
        },
      };
    });
    return { schedule, jobs, untilMs: plan.untilMs, dropped: plan.dropped.length };
  }

  /**
   * Writes all schedules in one transaction (one INSERT, one UPDATE). If that
   * fails, each schedule is retried alone so one bad schedule cannot hold up
   * the rest. Rows go in key order: two nodes inserting overlapping keys take
   * the unique-index locks in the same order and cannot deadlock.
   */
  private async write(planned: Planned[]): Promise<Map<string, number>> {
    const inserted = new Map<string, number>();
    if (planned.length === 0) return inserted;
    const writeBatch = async (batch: Planned[]) => {
      const jobs = batch.flatMap((p) => p.jobs).sort((a, b) => (a.options!.idempotencyKey! < b.options!.idempotencyKey! ? -1 : 1));
      const advance = [...batch].sort((a, b) => (a.schedule.id < b.schedule.id ? -1 : 1));
      const progress = [advance.map((p) => p.schedule.id), advance.map((p) => new Date(p.untilMs))];
      // Nothing to insert (most ticks of most schedules): the progress UPDATE alone, without a transaction.
      const rows =
        jobs.length === 0
          ? (await this.db.query(q.AdvanceProgress, progress), [])
          : await this.db.transaction(async (tx) => {
              const rows = await enqueueMany(tx, jobs);
              await tx.query(q.AdvanceProgress, progress);
              return rows;
            });
      const owner = new Map(batch.flatMap((p) => p.jobs.map((j) => [j.options!.idempotencyKey!, p.schedule.id] as const)));
      for (const r of rows) {
        const id = owner.get(r.idempotencyKey!)!;
        inserted.set(id, (inserted.get(id) ?? 0) + 1);
      }
    };
    try {
      await writeBatch(planned);
    } catch (err) {
      if (planned.length === 1) throw err;
      this.log.warn('batched materialize failed; retrying schedule by schedule', { error: (err as Error).message });
      for (const p of planned) {
        await writeBatch([p]).catch((e) => this.log.error('materialize failed', { schedule: p.schedule.id, error: (e as Error).message }));
      }
    }
    return inserted;
  }
}
