import { preparedOn, type Queryable } from './db.ts';
import { DEFAULTS } from './defaults.ts';
import { loadQueries } from './sql.ts';
import { keysOf, refuseUnknownKeys, serializePayload, validateDate, validateInt, validateKey, validateQueueName } from './validate.ts';
import { ValidationError } from './errors.ts';
import { activeTraceparent, validateTraceparent } from './tracing.ts';

/** The loaded queries of enqueue.sql; read at each call, so the harness's mutants can patch one (harness/mutants). Not part of engine/index.ts. */
export const enqueueQueries = loadQueries(new URL('./enqueue.sql', import.meta.url), [
  'EnqueueOne',
  'FindByIdempotencyKey',
  'EnqueueMany',
  'SetQueueMaxAttempts',
] as const);
const q = enqueueQueries;

export interface EnqueueOptions {
  /** When the job becomes due. Default: now (the database's now()). Exclusive with delayMs. */
  runAt?: Date | string | number;
  /** Due this many milliseconds after the database's now(). Exclusive with runAt. */
  delayMs?: number;
  /** 0 (lowest) to 9 (highest). Default 0. */
  priority?: number;
  /** Attempts before the job is dead-lettered. Default: the queue's setting, else 6. */
  maxAttempts?: number;
  /** Enqueueing the same key again returns the first job and inserts nothing. */
  idempotencyKey?: string;
  /** Largest serialized payload in bytes. Default 256 KiB. */
  maxPayloadBytes?: number;
  /**
   * The tenant (account, customer) this job belongs to, 1 to 512 characters. In a queue with
   * maxInFlightPerKey (setQueueLimits) the claim caps each key's jobs in flight and shares the
   * queue's claims across keys by weight (setKeyWeight); elsewhere it is only stored. Default: none.
   */
  fairnessKey?: string;
  /**
   * The W3C traceparent of the work that enqueued this job; each attempt's span continues it (engine/tracing.ts).
   * Default: the active OpenTelemetry span's, when @opentelemetry/api is installed and a span is active; else none.
   */
  traceparent?: string;
}

export interface EnqueuedJob {
  id: number;
  runAt: Date;
  idempotencyKey: string | null;
  /** False when the idempotency key already named a job, which is returned instead. */
  inserted: boolean;
}

interface Row {
  queue: string;
  payload: string;
  priority: number;
  maxAttempts: number | null;
  key: string | null;
  fairnessKey: string | null;
  traceparent: string | null;
  runAt: Date | null;
  delayMs: number;
}

export const ENQUEUE_OPTIONS = keysOf<EnqueueOptions>()(['runAt', 'delayMs', 'priority', 'maxAttempts', 'idempotencyKey', 'maxPayloadBytes', 'fairnessKey', 'traceparent']);
const BULK_JOB_FIELDS = keysOf<BulkJob>()(['queue', 'payload', 'options']);

/** Checks everything before anything is written; throws ValidationError naming the field. */
function prepare(queue: unknown, payload: unknown, options: EnqueueOptions = {}, prefix = ''): Row {
  const f = (name: string) => `${prefix}${name}`;
  if (typeof options !== 'object' || options === null) throw new ValidationError(f('options'), `expected an object of ${ENQUEUE_OPTIONS.join(', ')}`);
  refuseUnknownKeys(options, ENQUEUE_OPTIONS, (k) => f(`options.${k}`), 'an enqueue option');
  if (options.runAt !== undefined && options.delayMs !== undefined) {
    throw new ValidationError(f('options'), 'give runAt or delayMs, not both');
  }
  return {
    queue: validateQueueName(queue, f('queue')),
    payload: serializePayload(payload, options.maxPayloadBytes ?? DEFAULTS.maxPayloadBytes, f('payload')),
    priority: options.priority === undefined ? DEFAULTS.priority : validateInt(options.priority, f('priority'), 0, 9),
    // null: the queue's setting (setQueueMaxAttempts), else DEFAULTS.maxAttempts, decided in the INSERT.
    maxAttempts: options.maxAttempts === undefined ? null : validateInt(options.maxAttempts, f('maxAttempts'), 1, 1000),
    key: options.idempotencyKey === undefined ? null : validateKey(options.idempotencyKey, f('idempotencyKey')),
    fairnessKey: options.fairnessKey === undefined ? null : validateKey(options.fairnessKey, f('fairnessKey')),
    traceparent: options.traceparent === undefined ? activeTraceparent() : validateTraceparent(options.traceparent, f('traceparent')),
    runAt: options.runAt === undefined ? null : validateDate(options.runAt, f('runAt')),
    delayMs: options.delayMs === undefined ? 0 : validateInt(options.delayMs, f('delayMs'), 0),
  };
}

const toEnqueued = (r: any): EnqueuedJob => ({
  id: r.id,
  runAt: r.run_at,
  idempotencyKey: r.idempotency_key,
  inserted: r.inserted,
});

/**
 * Adds one job with a single INSERT. Pass the pool and the job has committed
 * when this resolves; pass a client inside your own transaction and it
 * commits or rolls back with your write.
 */
export async function enqueue(db: Queryable, queue: string, payload: unknown, options?: EnqueueOptions): Promise<EnqueuedJob> {
  const r = prepare(queue, payload, options);
  const params = [r.queue, r.payload, r.priority, r.maxAttempts, r.key, r.runAt, r.delayMs, DEFAULTS.maxAttempts, r.fairnessKey, r.traceparent];
  // Prepared on a Db: planning this INSERT took as long as running it (docs/performance.md).
  const res = await db.query(preparedOn(db, q.EnqueueOne, params));
  if (res.rows[0]) return toEnqueued(res.rows[0]);
  // A concurrent enqueue with the same key committed after our snapshot; it is there now.
  const again = await db.query(q.FindByIdempotencyKey, [r.key]);
  if (!again.rows[0]) throw new Error(`enqueue of key ${r.key} neither inserted nor found a job`);
  return toEnqueued(again.rows[0]);
}

export interface BulkJob {
  queue: string;
  payload: unknown;
  options?: EnqueueOptions;
}

/**
 * Adds many jobs in one statement. Every job is validated first; one bad job
 * refuses the whole batch (the error names its index). Jobs whose
 * idempotency key already exists are skipped; the result lists the inserted ones.
 */
export async function enqueueMany(db: Queryable, jobs: readonly BulkJob[]): Promise<EnqueuedJob[]> {
  if (!Array.isArray(jobs)) throw new ValidationError('jobs', 'expected an array of { queue, payload, options? }');
  if (jobs.length === 0) return [];
  const rows = jobs.map((j, i) => {
    if (typeof j !== 'object' || j === null) throw new ValidationError(`jobs[${i}]`, 'expected { queue, payload, options? }');
    // `{ queue, payload, priority: 9 }` is the likely slip: the option belongs in `options`.
    refuseUnknownKeys(j, BULK_JOB_FIELDS, (k) => `jobs[${i}].${k}`, 'a field of a bulk job (enqueue options go in its options)');
    return prepare(j.queue, j.payload, j.options, `jobs[${i}].`);
  });
  const res = await db.query(q.EnqueueMany, [
    rows.map((r) => r.queue),
    rows.map((r) => r.payload),
    rows.map((r) => r.priority),
    rows.map((r) => r.maxAttempts),
    rows.map((r) => r.key),
    rows.map((r) => r.runAt),
    rows.map((r) => r.delayMs),
    DEFAULTS.maxAttempts,
    rows.map((r) => r.fairnessKey),
    rows.map((r) => r.traceparent),
  ]);
  return res.rows.map(toEnqueued);
}

/** Sets the attempt budget for jobs of `queue` that do not give their own. */
export async function setQueueMaxAttempts(db: Queryable, queue: string, maxAttempts: number): Promise<void> {
  await db.query(q.SetQueueMaxAttempts, [validateQueueName(queue), validateInt(maxAttempts, 'maxAttempts', 1, 1000)]);
}
