import type { Clock } from '../clock.ts';
import type { Db } from '../db.ts';
import { DEFAULTS } from '../defaults.ts';
import { ValidationError } from '../errors.ts';
import type { Events } from '../events.ts';
import type { Handlers } from '../handler.ts';
import type { Logger } from '../log.ts';
import type { Rng } from '../rng.ts';
import { checkComponentOptions, keysOf, refuseUnknownKeys, validateQueueName } from '../validate.ts';

/** Per-queue settings; each falls back to the worker-wide value. */
export interface QueueOptions {
  /** Visibility timeout: a claim lasts this long without a heartbeat. Pick it well above the p99 job duration unless heartbeats are on. Default 30,000. */
  leaseMs?: number;
  /** Heartbeat period; 0 turns heartbeats off. Keep it a third of leaseMs or less, so two lost renewals still leave time. Default 10,000. */
  heartbeatMs?: number;
  /** A handler that runs longer fails this attempt with JobTimeoutError. Default: no limit (the lease still bounds a dead worker). */
  timeoutMs?: number;
  /** Retry ceiling of the first failure. Default 1,000. */
  backoffBaseMs?: number;
  /** Largest retry ceiling. Default 300,000. */
  backoffCapMs?: number;
}

export interface WorkerOptions extends QueueOptions {
  db: Db;
  /** Handlers by queue; the worker claims only from these queues. */
  handlers: Handlers;
  /** Per-queue overrides of the QueueOptions above. */
  queues?: Record<string, QueueOptions>;
  /** Shown as lease_owner and in events. Default: host:pid:random. */
  workerId?: string;
  /** Jobs in flight at once in this worker. Default 10. */
  concurrency?: number;
  /**
   * Claim-ahead: jobs this worker may hold claimed beyond `concurrency`, waiting for a slot, so a freed
   * slot starts the next job without a round trip and each claim takes a larger batch. A waiting job is
   * this worker's claim: its lease is renewed by heartbeats while it waits (so claim-ahead is off, 0,
   * when any of the worker's queues has heartbeatMs 0), it is handed back uncharged at stop(), and if the
   * process dies it is rescued with the running ones (charged a crash, then run alone as a suspect).
   * Costs: a crash takes up to concurrency + claimAhead jobs down with it, and a job enqueued after the
   * claim (even of a higher priority) starts behind the waiting ones. Default: the same as concurrency.
   * 0 turns it off. See docs/performance.md.
   */
  claimAhead?: number;
  /** Poll interval when no NOTIFY arrives. Tight polling burns DB CPU, long polling adds delay. Default 1,000. */
  pollMs?: number;
  /** LISTEN for enqueue notifications for low latency. Default true. */
  listen?: boolean;
  /** Aging: a job of priority p overtakes one of priority q > p after waiting (q - p) * agingMs longer. Default 5,000. */
  agingMs?: number;
  /** Run a lease rescuer in this worker. Default true. */
  rescue?: boolean;
  /** Rescuer period. Default 1,000. */
  rescueIntervalMs?: number;
  /** Expired leases with no recorded failure before a job is dead-lettered as a poison pill. Default 2. */
  maxCrashes?: number;
  /**
   * How often this worker renews its liveness row (stampede.workers), ms. A lease that expires is charged
   * as a crash only when its holder has been silent for 3 periods; a live holder gets the job taken back
   * without one. Give every worker process its own workerId (the default does): a restarted process that
   * reuses the id of a dead one would vouch for it. Default 1,000.
   */
  livenessMs?: number;
  /** A busy worker drains to run a suspect alone once the oldest suspect has waited this long; an idle one takes it at once. Default 2,000. */
  suspectPatienceMs?: number;
  /** After stop(), how long in-flight jobs may run before their claims are handed back. Default 10,000. */
  shutdownGraceMs?: number;
  clock?: Clock;
  rng?: Rng;
  events?: Events;
  log?: Logger;
}

export type ResolvedQueueOptions = Required<Omit<QueueOptions, 'timeoutMs'>> & { timeoutMs: number | undefined };

function positive(value: number | undefined, field: string, allowZero = false): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new ValidationError(field, `${String(value)} is not a ${allowZero ? 'non-negative' : 'positive'} number of milliseconds`);
  }
}

const QUEUE_OPTIONS = keysOf<QueueOptions>()(['leaseMs', 'heartbeatMs', 'timeoutMs', 'backoffBaseMs', 'backoffCapMs']);
export const WORKER_OPTIONS = keysOf<WorkerOptions>()([
  ...(QUEUE_OPTIONS as readonly (keyof QueueOptions)[]),
  'db', 'handlers', 'queues', 'workerId', 'concurrency', 'claimAhead', 'pollMs', 'listen', 'agingMs', 'rescue',
  'rescueIntervalMs', 'maxCrashes', 'livenessMs', 'suspectPatienceMs', 'shutdownGraceMs', 'clock', 'rng', 'events', 'log',
]);

function validateQueueOptions(o: QueueOptions, prefix: string): void {
  positive(o.leaseMs, `${prefix}leaseMs`);
  positive(o.heartbeatMs, `${prefix}heartbeatMs`, true);
  positive(o.timeoutMs, `${prefix}timeoutMs`);
  positive(o.backoffBaseMs, `${prefix}backoffBaseMs`, true);
  positive(o.backoffCapMs, `${prefix}backoffCapMs`, true);
}

/** Checks a worker's options before it touches the database; throws ValidationError naming the field. */
export function validateWorkerOptions(o: WorkerOptions): void {
  checkComponentOptions(o, WORKER_OPTIONS, 'Worker');
  const queues = Object.keys(o.handlers ?? {});
  if (queues.length === 0) throw new ValidationError('handlers', 'expected at least one queue with a handler function');
  for (const q of queues) {
    validateQueueName(q, `handlers["${q}"]`);
    if (typeof o.handlers[q] !== 'function') throw new ValidationError(`handlers["${q}"]`, 'expected a function');
  }
  validateQueueOptions(o, '');
  for (const [q, qo] of Object.entries(o.queues ?? {})) {
    refuseUnknownKeys(qo, QUEUE_OPTIONS, (k) => `queues["${q}"].${k}`, 'a per-queue option');
    validateQueueOptions(qo, `queues["${q}"].`);
  }
  // A renewal period as long as the lease lets every lease run out between two renewals: each job that runs longer
  // than the lease would be taken back and run again while its handler is still running.
  for (const q of queues) {
    const { leaseMs, heartbeatMs } = resolveQueueOptions(o, q);
    if (heartbeatMs > 0 && heartbeatMs >= leaseMs) {
      const field = o.queues?.[q]?.heartbeatMs !== undefined ? `queues["${q}"].heartbeatMs` : 'heartbeatMs';
      throw new ValidationError(field, `${heartbeatMs} ms is not shorter than queue "${q}"'s leaseMs (${leaseMs} ms); expected a period below the lease, a third of it by default`);
    }
  }
  if (o.concurrency !== undefined && (!Number.isInteger(o.concurrency) || o.concurrency < 1)) {
    throw new ValidationError('concurrency', `${o.concurrency} is not a positive integer`);
  }
  if (o.claimAhead !== undefined && (!Number.isInteger(o.claimAhead) || o.claimAhead < 0)) {
    throw new ValidationError('claimAhead', `${o.claimAhead} is not a non-negative integer`);
  }
  positive(o.pollMs, 'pollMs');
  positive(o.agingMs, 'agingMs');
  positive(o.rescueIntervalMs, 'rescueIntervalMs');
  positive(o.livenessMs, 'livenessMs');
  positive(o.shutdownGraceMs, 'shutdownGraceMs', true);
  positive(o.suspectPatienceMs, 'suspectPatienceMs', true);
  if (o.maxCrashes !== undefined && (!Number.isInteger(o.maxCrashes) || o.maxCrashes < 1)) {
    throw new ValidationError('maxCrashes', `${o.maxCrashes} is not a positive integer`);
  }
}

export function resolveQueueOptions(o: WorkerOptions, queue: string): ResolvedQueueOptions {
  const q = o.queues?.[queue] ?? {};
  const leaseMs = q.leaseMs ?? o.leaseMs ?? DEFAULTS.leaseMs;
  return {
    leaseMs,
    // Unset, the period follows a lease shorter than the defaults': a third of it, so two renewals can be late.
    heartbeatMs: q.heartbeatMs ?? o.heartbeatMs ?? Math.min(DEFAULTS.heartbeatMs, Math.max(1, Math.floor(leaseMs / 3))),
    timeoutMs: q.timeoutMs ?? o.timeoutMs,
    backoffBaseMs: q.backoffBaseMs ?? o.backoffBaseMs ?? DEFAULTS.backoffBaseMs,
    backoffCapMs: q.backoffCapMs ?? o.backoffCapMs ?? DEFAULTS.backoffCapMs,
  };
}
