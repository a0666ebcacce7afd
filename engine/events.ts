import { EventEmitter } from 'node:events';
import type { DeadLetterCode } from './dead-letters.ts';

/**
 * Every event the engine emits, by name (`noun:verb`). The same events feed
 * the metrics, the harness history and the tests' waits. Times are node-clock
 * epoch ms (`at`) unless named `db…`, which come from the database's now().
 */
export interface EngineEvents {
  /** `crashCount` > 0: a suspect (it was in flight when a worker died). `dbLeaseExpiresAt`: when this claim's lease ends unless renewed. */
  'job:claimed': {
    jobId: number;
    queue: string;
    priority: number;
    attempt: number;
    workerId: string;
    runAt: number;
    dbClaimedAt: number;
    /** The database's clock when the claim took the row, after its locks (ClaimedJob.dbTakenAt). */
    dbTakenAt: number;
    crashCount: number;
    dbLeaseExpiresAt: number;
    /** The job's fairnessKey (its tenant); null when it has none. */
    fairnessKey: string | null;
    /**
     * The claim's fencing token (jobs.lease_token): every later write of this hold is fenced on it, and a
     * claim made again with the same attempt number (a hand-back, a claim a failover lost) has another.
     */
    leaseToken: string;
  };
  'job:started': { jobId: number; queue: string; attempt: number; workerId: string };
  /** `leaseToken`: the hold's, as its `job:claimed` reported it (the completion was fenced on it). */
  'job:completed': { jobId: number; queue: string; attempt: number; workerId: string; durationMs: number; leaseToken: string };
  /** `attempt` of `maxAttempts` (the job's budget); at the budget the job is dead and `job:dead` follows. */
  'job:failed': { jobId: number; queue: string; attempt: number; maxAttempts: number; workerId: string; durationMs: number; error: string; dbFailedAt: number; retryAt: number };
  /** `code` says why it died (DEAD_LETTER_CODES), `reason` in words: the dead letter's own. */
  'job:dead': { jobId: number; queue: string; attempt: number; code: DeadLetterCode; reason: string };
  /** A heartbeat found the lease gone, or completion was refused by the fence. */
  /** The claim was handed back uncharged for a retry at `retryAt` (its effect was held by another holder's open transaction). */
  'job:deferred': { jobId: number; queue: string; attempt: number; workerId: string; reason: string; retryAt: number };
  /**
   * `phase`: a heartbeat found the lease gone (`heartbeat`), the fence refused the completion (`complete`) or the
   * failure (`fail`), or no renewal had landed for a whole lease, so by the worker's own clock the lease may have
   * expired and the handler was aborted before anyone else could be given the job (`expired`).
   */
  'lease:lost': {
    jobId: number;
    queue: string;
    attempt: number;
    workerId: string;
    phase: 'heartbeat' | 'complete' | 'fail' | 'expired';
    /** The hold's fencing token, as its `job:claimed` reported it. */
    leaseToken: string;
    /** When the handler had already returned (a refused write, `complete`/`fail`; a `heartbeat` its outcome waited for): how long it ran, ms. */
    handlerMs?: number;
  };
  /** An operator cancelled a claimed job; its heartbeat found out and aborted the handler. */
  'job:cancelled': { jobId: number; queue: string; attempt: number; workerId: string };
  /** A heartbeat renewed the lease: it now ends at `dbLeaseExpiresAt`. */
  'lease:renewed': { jobId: number; queue: string; attempt: number; workerId: string; dbRenewedAt: number; dbLeaseExpiresAt: number };
  /** Shutdown's grace ran out: the claim was handed back uncharged, for another worker to take at once. */
  'lease:released': { jobId: number; queue: string; attempt: number; workerId: string };
  /**
   * The rescuer found the lease expired. `owner` held it until `dbLeaseExpiredAt`; the rescue
   * happened at `dbRescuedAt` (both database clock). Optional: a rescuer built without them reports only the counts.
   */
  'lease:rescued': {
    jobId: number;
    queue: string;
    attempts: number;
    crashCount: number;
    dead: boolean;
    owner?: string | null;
    dbRescuedAt?: number;
    dbLeaseExpiredAt?: number;
    /** The holder was dead by its own liveness row: the expiry was charged as a crash. */
    crashed: boolean;
  };
  'worker:error': { workerId: string; error: string };
  /** stop() was called: the worker claims nothing more, starts none of the jobs it claimed ahead, and hands those back. */
  'worker:stopping': { workerId: string };
  /**
   * A statement of the worker failed for a reason of the database's, not the job's (engine/errors.ts dbErrorKind):
   * read-only, out of connection slots, shutting down, the connection lost. `where`: the claim loop, a lease
   * renewal, a result write, an effect's transaction. No job is charged for one.
   */
  'db:error': { workerId: string; kind: import('./errors.ts').DbErrorKind; sqlstate: string | null; where: 'claim' | 'heartbeat' | 'result' | 'effect'; error: string };
  /** The worker's LISTEN connection is up (again): enqueues now wake it at once. */
  'worker:listening': { workerId: string };
  'process:started': { slot: number; pid: number };
  /** A supervised process ended; `restartInMs` is null when the supervisor is stopping or gave up. */
  'process:exited': { slot: number; pid: number; code: number | null; signal: string | null; restartInMs: number | null };
  /** A process exited with one of the supervisor's `fatalExitCodes`: nothing is restarted, the others are stopped. */
  'supervisor:gave-up': { slot: number; pid: number; code: number };
  'cron:materialized': { scheduleId: string; occurrences: number; inserted: number; nodeId: string };
  'cron:refused': { scheduleId?: string; nodeId: string; reason: string; skewMs: number };
  /** The receiver acknowledged an outbox row. */
  'outbox:delivered': { id: number; topic: string; key: string; attempt: number; relayId: string; durationMs: number };
  /** A delivery failed; `retryAt` is when the row is due again (db clock, epoch ms), or null when it is dead. */
  'outbox:failed': { id: number; topic: string; key: string; attempt: number; relayId: string; error: string; retryAt: number | null };
  /** An outbox row spent its attempt budget; listOutbox(db, {state: 'dead'}) shows it. */
  'outbox:dead': { id: number; topic: string; key: string; attempts: number; reason: string };
  /** A pruner pass deleted dedup keys and delivered outbox rows older than the retention. */
  'effects:pruned': { effectKeys: number; outboxRows: number };
}

export type EventName = keyof EngineEvents;

/** The long-running components that emit events (a worker process runs a worker and a rescuer; a relay process a relay and a pruner). */
export type Emitter = 'worker' | 'rescuer' | 'cron' | 'relay' | 'pruner' | 'supervisor';

/**
 * What each event is beside its payload: who emits it and, when it has one, the payload field that is the
 * database's instant of it (a history records that as its `dbTime`). Declared once, for every event of
 * EngineEvents (`satisfies` fails the build on a missing or an extra name): the processes forward the events of
 * their components from here (eventsEmittedBy), and the harness's history derives its records from it.
 */
export const ENGINE_EVENTS = {
  'job:claimed': { by: ['worker'], dbTime: 'dbClaimedAt' },
  'job:started': { by: ['worker'] },
  'job:completed': { by: ['worker'] },
  'job:failed': { by: ['worker'], dbTime: 'dbFailedAt' },
  'job:dead': { by: ['worker', 'rescuer'] },
  'job:deferred': { by: ['worker'] },
  'lease:lost': { by: ['worker'] },
  'job:cancelled': { by: ['worker'] },
  'lease:renewed': { by: ['worker'], dbTime: 'dbRenewedAt' },
  'lease:released': { by: ['worker'] },
  'lease:rescued': { by: ['rescuer'], dbTime: 'dbRescuedAt' },
  'worker:error': { by: ['worker'] },
  'worker:stopping': { by: ['worker'] },
  'db:error': { by: ['worker'] },
  'worker:listening': { by: ['worker'] },
  'process:started': { by: ['supervisor'] },
  'process:exited': { by: ['supervisor'] },
  'supervisor:gave-up': { by: ['supervisor'] },
  'cron:materialized': { by: ['cron'] },
  'cron:refused': { by: ['cron'] },
  'outbox:delivered': { by: ['relay'] },
  'outbox:failed': { by: ['relay'] },
  'outbox:dead': { by: ['relay'] },
  'effects:pruned': { by: ['pruner'] },
} as const satisfies { [E in EventName]: EventDeclaration<E> };

interface EventDeclaration<E extends EventName> {
  by: readonly Emitter[];
  /** The payload's database-clock instant of the event (a `db…` field), if it has one. */
  dbTime?: Extract<keyof EngineEvents[E], `db${string}`>;
}

/** The payload field that is the database's instant of event E, or never. */
export type DbTimeField<E extends EventName> = (typeof ENGINE_EVENTS)[E] extends { dbTime: infer F } ? F : never;

/** Every declared event name, in declaration order. */
export const EVENT_NAMES = Object.keys(ENGINE_EVENTS) as EventName[];

/** The events any of these components emit: what a process running them forwards to its parent. */
export function eventsEmittedBy(...emitters: Emitter[]): EventName[] {
  return EVENT_NAMES.filter((name) => ENGINE_EVENTS[name].by.some((b) => emitters.includes(b)));
}

/** What a worker process resolved from its options, per queue (bin/worker.ts): a harness holds its retries, heartbeats and leases to it. */
export interface WorkerSettings {
  workerId: string;
  /** The most handlers it runs at once (WorkerOptions.concurrency). */
  concurrency: number;
  maxCrashes: number;
  agingMs: number;
  /** Whether it was told to run a lease rescuer of its own (WorkerOptions.rescue): false, it must take back no expired lease. */
  rescue: boolean;
  /** Whether its Db runs the hot statements as named prepared statements (DbOptions.preparedStatements; false: `--no-prepared-statements`). */
  preparedStatements: boolean;
  queues: Record<string, WorkerQueueSettings>;
}

export interface WorkerQueueSettings {
  leaseMs: number;
  heartbeatMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  /** The handler's time limit; null: none. */
  timeoutMs: number | null;
}

/**
 * Everything a node process reports to the process that started it (EventMessage): its components' events, and
 * what the process itself reports once (`worker:settings`, as a worker starts).
 */
export interface NodeEvents extends EngineEvents {
  'worker:settings': WorkerSettings;
}

/** A typed emitter whose listeners cannot break the component that emits: a throwing listener is reported, not propagated. */
export class Events {
  private readonly emitter = new EventEmitter();

  constructor(private readonly onListenerError: (err: unknown, event: EventName) => void = () => {}) {
    this.emitter.setMaxListeners(100);
  }

  on<E extends EventName>(event: E, listener: (payload: EngineEvents[E]) => void): () => void {
    this.emitter.on(event, listener);
    return () => this.emitter.off(event, listener);
  }

  /** Whether anyone listens to `event`: the worker's per-job events build their payload only then. */
  has(event: EventName): boolean {
    return this.emitter.listenerCount(event) > 0;
  }

  emit<E extends EventName>(event: E, payload: EngineEvents[E]): void {
    // listeners() copies the list: skip it when there is nobody to tell (three events per job).
    if (!this.has(event)) return;
    for (const listener of this.emitter.listeners(event)) {
      try {
        (listener as (p: EngineEvents[E]) => void)(payload);
      } catch (err) {
        this.onListenerError(err, event);
      }
    }
  }

  /** Resolves with the first payload of `event` that satisfies `predicate`. For tests: wait on signals, not sleeps. */
  waitFor<E extends EventName>(event: E, predicate: (p: EngineEvents[E]) => boolean = () => true, signal?: AbortSignal): Promise<EngineEvents[E]> {
    return new Promise((resolve, reject) => {
      const off = this.on(event, (p) => {
        if (!predicate(p)) return;
        off();
        resolve(p);
      });
      signal?.addEventListener('abort', () => {
        off();
        reject(signal.reason);
      });
    });
  }
}
