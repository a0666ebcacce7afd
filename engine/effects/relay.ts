import { hostname } from 'node:os';
import { systemClock, type Clock } from '../clock.ts';
import type { Db } from '../db.ts';
import { coerceError, ValidationError } from '../errors.ts';
import { Events } from '../events.ts';
import { createLogger, type Logger } from '../log.ts';
import { SeededRng, randomSeed, type Rng } from '../rng.ts';
import { declareOptions, validateDeclared } from '../options/declare.ts';
import { validateQueueName } from '../validate.ts';
import { WORKER } from '../worker/options.ts';
import { PeriodicLoop } from '../periodic.ts';
import { retryDelayMs } from '../worker/backoff.ts';
import { outboxQueries as q, type OutboxRow } from './outbox.ts';

/** What deliver() gets besides the row. */
export interface DeliveryContext {
  /** The row's key. Send it as the receiver's idempotency key (e.g. an `Idempotency-Key` header): the relay delivers at least once, the receiver makes it once. */
  idempotencyKey: string;
  /** 1 for the first delivery of this row. */
  attempt: number;
  relayId: string;
  /** Aborted when deliveryTimeoutMs passes; pass it to your HTTP client. */
  signal: AbortSignal;
}

/** Delivers one outbox row. Resolve when the receiver acknowledged it; throw (anything) to retry later. */
export type Deliver = (row: OutboxRow, ctx: DeliveryContext) => unknown | Promise<unknown>;

export interface OutboxRelayOptions {
  db: Db;
  deliver: Deliver;
  /** Deliver only these topics. Default: every topic. */
  topics?: string[];
  /** Rows claimed per pass, delivered concurrently. Default 20. */
  batchSize?: number;
  /** Sleep between passes that found less than a full batch, ms. Default 1,000. */
  pollMs?: number;
  /**
   * How long a claim lasts, ms: a relay that dies mid-delivery leaves its rows
   * to others after this. Must exceed deliveryTimeoutMs. Default 30,000.
   */
  leaseMs?: number;
  /** A delivery running longer is aborted and counted as failed, ms. Default 10,000. */
  deliveryTimeoutMs?: number;
  /** Retry ceiling after the first failed delivery, ms (full jitter, as the worker). Default 1,000. */
  backoffBaseMs?: number;
  /** Largest retry ceiling, ms. Default 300,000. */
  backoffCapMs?: number;
  /** Shown as lease_owner and in events. Default host:pid:random. */
  relayId?: string;
  clock?: Clock;
  rng?: Rng;
  events?: Events;
  log?: Logger;
}

/** The relay's options, declared once (engine/options/declare.ts derives the rest). */
export const RELAY = declareOptions<OutboxRelayOptions>()(
  'OutboxRelay',
  {
    batchSize: { type: 'int', min: 1, unit: 'rows', default: 20, flag: 'batch-size', doc: 'rows claimed per pass, delivered concurrently' },
    pollMs: { type: 'int', min: 1, unit: 'ms', default: 1_000, flag: 'poll-ms', doc: 'sleep between passes that found less than a full batch' },
    leaseMs: {
      type: 'int', min: 1, unit: 'ms', default: 30_000, flag: 'lease-ms',
      doc: "how long a claimed row is this relay's before another may take it", note: 'must exceed deliveryTimeoutMs',
    },
    deliveryTimeoutMs: { type: 'int', min: 1, unit: 'ms', default: 10_000, flag: 'delivery-timeout-ms', doc: "one delivery's time limit; ctx.signal aborts past it" },
    backoffBaseMs: {
      type: 'ms', zero: true, unit: 'ms', default: WORKER.defaults.backoffBaseMs, flag: 'backoff-base-ms',
      doc: 'retry ceiling after the first failed delivery (full jitter, as the worker)',
    },
    backoffCapMs: { type: 'ms', zero: true, unit: 'ms', default: WORKER.defaults.backoffCapMs, flag: 'backoff-cap-ms', doc: 'largest retry ceiling' },
  },
  ['db', 'deliver', 'topics', 'relayId', 'clock', 'rng', 'events', 'log'],
);

export const RELAY_DEFAULTS = RELAY.defaults;
export const RELAY_OPTIONS = RELAY.names;

/** Checks a relay's options before it touches the database; throws ValidationError naming the field. */
export function validateRelayOptions(o: OutboxRelayOptions): void {
  validateDeclared(RELAY, o);
  if (typeof o.deliver !== 'function') throw new ValidationError('deliver', 'expected a function (row, ctx) => Promise<void>');
  if (o.topics !== undefined) {
    if (!Array.isArray(o.topics) || o.topics.length === 0) throw new ValidationError('topics', 'expected a non-empty array of topic names (omit it for all topics)');
    o.topics.forEach((t, i) => validateQueueName(t, `topics[${i}]`));
  }
  const leaseMs = o.leaseMs ?? RELAY.defaults.leaseMs;
  const timeoutMs = o.deliveryTimeoutMs ?? RELAY.defaults.deliveryTimeoutMs;
  if (timeoutMs >= leaseMs) {
    throw new ValidationError('deliveryTimeoutMs', `${timeoutMs} must be below leaseMs (${leaseMs}), or a slow delivery's row is sent again while it is still in flight`);
  }
}

/**
 * Delivers the outbox at least once. Each pass claims a batch of due rows
 * with SKIP LOCKED (so relays on many nodes share the work without waiting on
 * each other), calls deliver() for each with the row's key as the idempotency
 * key, and marks it delivered; a failure waits a full-jitter backoff (the
 * worker's policy) and a spent budget leaves the row dead, queryable with
 * listOutbox(db, {state: 'dead'}). A relay that dies mid-delivery reports
 * nothing: its rows are due again when their lease runs out, and are sent
 * again. That second request is why the receiver must deduplicate by key.
 */
export class OutboxRelay {
  readonly id: string;
  readonly events: Events;
  private readonly clock: Clock;
  private readonly rng: Rng;
  private readonly log: Logger;
  private readonly topics: string[] | null;
  private readonly loop: PeriodicLoop<number>;

  constructor(private readonly options: OutboxRelayOptions) {
    validateRelayOptions(options);
    this.clock = options.clock ?? systemClock;
    this.rng = options.rng ?? new SeededRng(randomSeed());
    this.id = options.relayId ?? `${hostname()}:${process.pid}:${this.rng.int(0, 0xffffff).toString(16)}`;
    this.log = (options.log ?? createLogger('relay')).child(this.id);
    this.events = options.events ?? new Events((err, event) => this.log.warn('event listener threw', { event, error: String(err) }));
    this.topics = options.topics ?? null;
    const batch = options.batchSize ?? RELAY.defaults.batchSize;
    this.loop = new PeriodicLoop({
      clock: this.clock,
      log: this.log,
      what: 'relay pass',
      intervalMs: options.pollMs ?? RELAY.defaults.pollMs,
      runOnce: () => this.runOnce(),
      again: (claimed) => claimed === batch, // a full batch: probably more due
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Stops after the pass in flight (its deliveries are bounded by deliveryTimeoutMs). Safe to call twice. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One pass: claims up to batchSize due rows and delivers them. Returns how many it claimed. */
  async runOnce(): Promise<number> {
    const o = this.options;
    const batch = o.batchSize ?? RELAY.defaults.batchSize;
    const leaseMs = o.leaseMs ?? RELAY.defaults.leaseMs;
    const res = await o.db.query(q.ClaimIntents, [batch, leaseMs, this.id, this.topics]);
    const deliveries: Promise<void>[] = [];
    for (const r of res.rows) {
      if (r.state === 'dead') {
        this.events.emit('outbox:dead', { id: r.id, topic: r.topic, key: r.key, attempts: r.attempts, reason: `attempts exhausted: ${r.last_error}` });
        continue;
      }
      deliveries.push(this.deliverOne(r));
    }
    await Promise.all(deliveries);
    return res.rowCount ?? 0;
  }

  private async deliverOne(r: any): Promise<void> {
    const row: OutboxRow = { id: r.id, topic: r.topic, key: r.key, payload: r.payload, attempts: r.attempts, maxAttempts: r.max_attempts, createdAt: r.created_at };
    const started = this.clock.now();
    const timeoutMs = this.options.deliveryTimeoutMs ?? RELAY.defaults.deliveryTimeoutMs;
    const abort = new AbortController();
    const timer = new AbortController();
    this.clock.sleep(timeoutMs, timer.signal).then(
      () => abort.abort(new Error(`delivery exceeded deliveryTimeoutMs (${timeoutMs} ms)`)),
      () => {},
    );
    const aborted = new Promise<never>((_, reject) => abort.signal.addEventListener('abort', () => reject(abort.signal.reason), { once: true }));
    let failure: unknown = undefined;
    let failed = false;
    try {
      const work = Promise.resolve().then(() => this.options.deliver(row, { idempotencyKey: row.key, attempt: row.attempts, relayId: this.id, signal: abort.signal }));
      work.catch(() => {}); // a deliver() that rejects after its timeout must not crash the process
      await Promise.race([work, aborted]);
    } catch (err) {
      failed = true;
      failure = err;
    } finally {
      timer.abort();
    }
    try {
      if (!failed) {
        await this.options.db.query(q.MarkDelivered, [row.id]);
        this.events.emit('outbox:delivered', { id: row.id, topic: row.topic, key: row.key, attempt: row.attempts, relayId: this.id, durationMs: this.clock.now() - started });
      } else {
        await this.recordFailure(row, r.lease_token, failure);
      }
    } catch (err) {
      // The result could not be written. The lease runs out and the row is
      // delivered again: a duplicate request the receiver's key absorbs.
      this.log.error('could not record delivery result; the row will be sent again after its lease', { id: row.id, error: (err as Error).message });
    }
  }

  private async recordFailure(row: OutboxRow, leaseToken: string, thrown: unknown): Promise<void> {
    const err = coerceError(thrown);
    const message = `${err.name}: ${err.message}`;
    const policy = { baseMs: this.options.backoffBaseMs ?? RELAY.defaults.backoffBaseMs, capMs: this.options.backoffCapMs ?? RELAY.defaults.backoffCapMs };
    const delayMs = retryDelayMs(row.attempts, policy, this.rng);
    const res = await this.options.db.query(q.FailDelivery, [row.id, leaseToken, message, delayMs]);
    const after = res.rows[0];
    if (!after) return; // our lease ran out and another relay holds the row; its report counts
    const dead = after.state === 'dead';
    this.events.emit('outbox:failed', {
      id: row.id,
      topic: row.topic,
      key: row.key,
      attempt: row.attempts,
      relayId: this.id,
      error: message,
      retryAt: dead ? null : (after.run_at as Date).getTime(),
    });
    if (dead) this.events.emit('outbox:dead', { id: row.id, topic: row.topic, key: row.key, attempts: after.attempts, reason: `attempts exhausted: ${message}` });
  }
}
