import type { Clock } from '../clock.ts';
import type { Db } from '../db.ts';
import { ValidationError } from '../errors.ts';
import type { Events } from '../events.ts';
import type { Handlers } from '../handler.ts';
import type { Logger } from '../log.ts';
import type { Rng } from '../rng.ts';
import { checkOptions, declareOptions, validateDeclared, type OptionSpec } from '../options/declare.ts';
import { refuseUnknownKeys, validateQueueName } from '../validate.ts';
import { RESCUER } from './rescuer.ts';

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
   * claim (even of a higher priority) starts behind the waiting ones. Default: the same as concurrency, and
   * left unset it grows while the queue is backed up (a claim came back full) and the handlers are fast: up to
   * what the slots run in about 100 ms at the handlers' mean duration, at most 500, so claims per second fall as
   * the backlog grows; it shrinks again when a job waited in it for more than half a heartbeat period
   * (engine/worker/claim-ahead.ts). A value that is set stays as set. 0 turns it off. Whatever its size, a
   * waiting job whose lease may have ended (no renewal landed) is given up and handed back at once, and none
   * starts after its lease may have ended. See docs/performance.md.
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

/**
 * The worker's options, declared once: the defaults (DEFAULTS), the validation, the CLI flags of `stampede worker`,
 * docs/configuration.md's table and the harness's worker flags all come from here. The doc comments on the
 * interfaces above are for editors; this table is what the rest reads.
 */
export const WORKER = declareOptions<WorkerOptions>()(
  'Worker',
  {
    concurrency: { type: 'int', min: 1, unit: 'jobs', default: 10, flag: 'concurrency', doc: 'jobs running at once in one worker process' },
    claimAhead: {
      type: 'int', min: 0, unit: 'jobs', defaultText: '= concurrency, growing while backed up', flag: 'claim-ahead',
      doc: 'jobs claimed beyond the free slots, so a freed slot starts the next at once (0 off)',
      note: "they are heartbeated while they wait for a slot, handed back at stop, and 0 when a queue has `heartbeatMs` 0; unset, it grows after a full claim to what the slots run in about 100 ms at the handlers' mean duration (at most 500), and shrinks when a job waited in it over half a heartbeat period; trade-offs in [performance.md](performance.md#the-worker-hot-path-and-what-each-setting-trades)",
    },
    leaseMs: { type: 'ms', unit: 'ms', default: 30_000, perQueue: true, flag: 'lease-ms', doc: 'visibility timeout of a claim without a heartbeat' },
    heartbeatMs: {
      type: 'ms', zero: true, unit: 'ms', default: 10_000, defaultText: '10,000, or a third of leaseMs when that is shorter', perQueue: true, flag: 'heartbeat-ms',
      doc: 'lease renewal period; 0 turns heartbeats off',
      note: "a period not shorter than the queue's lease is refused (`ValidationError`), since every lease would run out between two renewals",
    },
    timeoutMs: { type: 'ms', unit: 'ms', defaultText: 'none', perQueue: true, flag: 'timeout-ms', doc: 'a handler running longer fails the attempt with JobTimeoutError, and ctx.signal aborts' },
    backoffBaseMs: {
      type: 'ms', zero: true, unit: 'ms', default: 1_000, perQueue: true, flag: 'backoff-base-ms',
      doc: 'first retry ceiling; attempt n waits random(0, min(cap, base x 2^(n-1)))',
      note: 'retry ceilings: min(cap, base·2^(n−1)), full jitter',
    },
    backoffCapMs: { type: 'ms', zero: true, unit: 'ms', default: 5 * 60_000, perQueue: true, flag: 'backoff-cap-ms', doc: 'largest retry ceiling' },
    pollMs: { type: 'ms', unit: 'ms', default: 1_000, flag: 'poll-ms', doc: 'poll interval when no NOTIFY arrives: the fallback that bounds wake-up latency' },
    listen: { type: 'boolean', default: true, doc: 'LISTEN for enqueue notifications, for low latency' },
    agingMs: {
      type: 'ms', unit: 'ms', default: 5_000, flag: 'aging-ms',
      doc: 'priority p overtakes q > p after waiting (q - p) x this longer',
      note: 'priority aging: (q − p)·agingMs of waiting equals q − p levels',
    },
    rescue: {
      type: 'boolean', default: true, flag: 'no-rescue', doc: 'run a lease rescuer in this worker',
      note: 'false: this worker takes back no expired lease, so another process must (a worker with its rescuer, or a process that runs `LeaseRescuer`)',
    },
    rescueIntervalMs: { type: 'ms', unit: 'ms', default: RESCUER.defaults.intervalMs, flag: 'rescue-interval-ms', doc: "period of this worker's lease rescuer" },
    maxCrashes: { ...RESCUER.options.maxCrashes, flag: 'max-crashes' },
    livenessMs: {
      type: 'ms', unit: 'ms', default: 1_000,
      doc: "how often this worker renews its liveness row; silent for 3 periods, it is presumed dead (its expired leases are crashes)",
    },
    suspectPatienceMs: {
      type: 'ms', zero: true, unit: 'ms', default: 2_000,
      doc: 'a busy worker drains to run a suspect alone once the oldest suspect has waited this long (an idle one takes it at once)',
    },
    shutdownGraceMs: { type: 'ms', zero: true, unit: 'ms', default: 10_000, flag: 'grace-ms', doc: 'how long in-flight jobs may finish after stop() (SIGTERM) before their claims are handed back' },
  },
  ['db', 'handlers', 'queues', 'workerId', 'clock', 'rng', 'events', 'log'],
);

export const WORKER_OPTIONS = WORKER.names;
const perQueue = (spec: OptionSpec) => spec.perQueue === true;
const QUEUE_OPTIONS = Object.keys(WORKER.options).filter((k) => perQueue(WORKER.options[k]));

/**
 * A renewal period as long as the lease lets every lease run out between two renewals: each job that runs longer
 * than the lease would be taken back and run again while its handler is still running. The worker and the
 * harness's scenario settings both refuse it here. `lease` names the lease in the message.
 */
export function refuseHeartbeatNotBelowLease(field: string, heartbeatMs: number, leaseMs: number, lease = 'leaseMs'): void {
  if (heartbeatMs > 0 && heartbeatMs >= leaseMs) {
    throw new ValidationError(field, `${heartbeatMs} ms is not shorter than ${lease} (${leaseMs} ms); expected a period below the lease, a third of it by default (0 turns heartbeats off)`);
  }
}

/** Checks a worker's options before it touches the database; throws ValidationError naming the field. */
export function validateWorkerOptions(o: WorkerOptions): void {
  validateDeclared(WORKER, o);
  const queues = Object.keys(o.handlers ?? {});
  if (queues.length === 0) throw new ValidationError('handlers', 'expected at least one queue with a handler function');
  for (const q of queues) {
    validateQueueName(q, `handlers["${q}"]`);
    if (typeof o.handlers[q] !== 'function') throw new ValidationError(`handlers["${q}"]`, 'expected a function');
  }
  for (const [q, qo] of Object.entries(o.queues ?? {})) {
    refuseUnknownKeys(qo, QUEUE_OPTIONS, (k) => `queues["${q}"].${k}`, 'a per-queue option');
    checkOptions(WORKER, qo, `queues["${q}"].`, perQueue);
  }
  for (const q of queues) {
    const { leaseMs, heartbeatMs } = resolveQueueOptions(o, q);
    const field = o.queues?.[q]?.heartbeatMs !== undefined ? `queues["${q}"].heartbeatMs` : 'heartbeatMs';
    refuseHeartbeatNotBelowLease(field, heartbeatMs, leaseMs, `queue "${q}"'s leaseMs`);
  }
}

export function resolveQueueOptions(o: WorkerOptions, queue: string): ResolvedQueueOptions {
  const q = o.queues?.[queue] ?? {};
  const leaseMs = q.leaseMs ?? o.leaseMs ?? WORKER.defaults.leaseMs;
  return {
    leaseMs,
    // Unset, the period follows a lease shorter than the defaults': a third of it, so two renewals can be late.
    heartbeatMs: q.heartbeatMs ?? o.heartbeatMs ?? Math.min(WORKER.defaults.heartbeatMs, Math.max(1, Math.floor(leaseMs / 3))),
    timeoutMs: q.timeoutMs ?? o.timeoutMs,
    backoffBaseMs: q.backoffBaseMs ?? o.backoffBaseMs ?? WORKER.defaults.backoffBaseMs,
    backoffCapMs: q.backoffCapMs ?? o.backoffCapMs ?? WORKER.defaults.backoffCapMs,
  };
}
