/**
 * The recorded history of a scenario run: every operation the interpreter
 * performed and everything the system reported, in order, one JSON object a
 * line in `history.jsonl`. Checkers are pure functions over this list plus
 * the final database state, so a stored run can be checked again.
 *
 * `t` is milliseconds since the run started, on the harness's clock. `node`
 * names who reported it (a worker process, a scheduler node, the load
 * generator, the nemesis). `nodeTime` is that node's own (possibly skewed)
 * clock, `dbTime` the database's now() where the event came from a query.
 */
import { ENGINE_EVENTS, type DbTimeField, type EventName, type NodeEvents, type WorkerQueueSettings } from '../engine/events.ts';
import type { HandlerReports } from './handlers.ts';
import type { DeadLetterCode } from '../engine/dead-letters.ts';
import type { LoadedRule } from './prometheus/rules.ts';
import type { OperatorPath } from './faults/spec.ts';

export type HistoryEvent = { t: number; node: string; nodeTime?: number; dbTime?: number } & (
  /** Every event a node reports (engine/events.ts NodeEvents, harness/handlers.ts HandlerReports), as recorded: derived, not restated. */
  | Reported
  /** `payloadBytes`: its payload padded to exactly this many bytes of JSON (a mix entry's `payloadBytes`). */
  | { type: 'enqueue:invoke'; op: number; queue: string; intendedAt: number; kind: JobKind; payloadBytes?: number }
  /** `runAt` is the row's (database clock); `delayMs` how far ahead it was asked to be due, for a delayed job. */
  /** `traceparent`: the W3C trace context it was enqueued under (a scenario with `otel`). */
  /** `ownBudget`: the maxAttempts stampede's enqueue was given (null: none, the queue's budget or the default applies); absent for a peer's. */
  | { type: 'enqueue:ok'; op: number; jobId: number; queue: string; runAt: number; intendedAt: number; sentAt: number; delayMs?: number; fairnessKey?: string; traceparent?: string; ownBudget?: number | null }
  /** Outcome unknown: the acknowledgement was lost (connection reset during COMMIT, process killed). */
  | { type: 'enqueue:info'; op: number; queue: string; error: string }
  | { type: 'enqueue:fail'; op: number; queue: string; error: string }
  /** The generator could not offer a job within its slot: coordinated omission, made visible. */
  | { type: 'enqueue:late'; op: number; intendedAt: number; sentAt: number }
  | { type: 'process:started'; pid: number; role: 'worker' | 'scheduler' | 'relay' | 'archiver' }
  | { type: 'process:exited'; pid: number; role: string; code: number | null; signal: string | null; expected: boolean }
  /** A round the workers' elected queue-state sampler wrote (stampede.queue_state_rounds): `leader` is the writing worker's id, `t` when it was written. */
  | { type: 'sampler:round'; roundNo: number; leader: string }
  /**
   * The harness read the dashboard's queues page (sent at `sentAt`, answered at `t`): the round it showed, the
   * elected sampler's (`shared`, its number, leader and age) or one it ran (`own`), under its `maxAgeMs`
   * (DashboardServer.sharedRoundMaxAgeMs); per queue, due now, whether the figures were marked estimates, and the
   * oldest due, unclaimed job's age as shown (`oldestMs`) with whether the page marked it over the SLO.
   */
  | {
      type: 'dashboard:queues';
      sentAt: number;
      source: 'shared' | 'own';
      roundNo?: number;
      leader?: string;
      ageMs?: number;
      maxAgeMs: number;
      queues: Record<string, { due: number; estimated: boolean; oldestMs: number; overSlo: boolean }>;
    }
  /** A read of the queues page (sent at `sentAt`, answered at `t`) that answered `status`, not the page: the error page's message. */
  | { type: 'dashboard:queues-failed'; sentAt: number; status: number; message: string }
  | { type: 'fault:injected'; fault: string; detail: Record<string, unknown> }
  /** Proof that an injected fault bit: the kill landed on a job in flight, the poison was claimed, and so on. */
  | { type: 'fault:evidence'; fault: string; detail: Record<string, unknown> }
  /** The harness's downstream (harness/runner/downstream.ts) received a call; inFlight counts it, as the downstream saw it. */
  | {
      type: 'downstream:call';
      jobId: number;
      attempt: number;
      inFlight: number;
      capacity: number;
      overloaded: boolean;
      /** The calling job's queue and fairnessKey (`queue/key`) and the calls of that key open at once, counting this one (keyed jobs only). */
      key?: string;
      keyInFlight?: number;
    }
  /** An operator paused a queue (engine/control); dbTime is when the pause took effect. */
  /**
   * The harness's outbox sink (harness/runner/outbox-sink.ts) received a delivery of intent `key` from a
   * relay. `outcome`: `applied` (first time it took the key), `duplicate` (key already applied: absorbed),
   * `refused` (it answered 503 on purpose, applying nothing), `aborted` (the relay went away before the
   * sink answered; nothing applied). `writer`: the worker whose attempt recorded the intent (its payload's).
   */
  | { type: 'outbox:received'; key: string; attempt: number; relayId: string; outcome: 'applied' | 'duplicate' | 'refused' | 'aborted'; writer?: string }
  /**
   * A producer re-sent an enqueue whose acknowledgement it lost, with the same idempotency key
   * (the enqueue-retry fault): `firstJobId` is what the first send created (the harness dropped its
   * answer), `retryJobId` what the re-send answered; `resentDbMs` the database's now() just before the
   * re-send (a key whose job was archived before it is outside the idempotency window).
   */
  | { type: 'enqueue:retried'; key: string; firstJobId: number; retryJobId: number; resentDbMs?: number }
  | { type: 'queue:paused'; queue: string; by: string }
  /** An operator paused a schedule (the schedule-pause fault): `sentAt` when the verb was sent, `t` when it answered. */
  | { type: 'schedule:paused'; scheduleId: string; via: 'api' | 'dashboard'; sentAt: number }
  /** ... and resumed it: materializing may start again from `sentAt`. */
  | { type: 'schedule:resumed'; scheduleId: string; via: 'api' | 'dashboard'; sentAt: number }
  /**
   * An operator's control verb (the nemesis's operator faults, harness/faults/inject/operator.ts), through the
   * engine's API or the dashboard's POST action (`via`). `jobIds`: what it targeted (a bulk redrive: what its
   * answer moved); `before`/`after`: each target's state read just before and just after (a queue: `paused`,
   * `running` or its limits), the evidence that it bit; `outcome`: the verb's answer, `refused` with
   * `refusal` (the typed error's name, or the dashboard's red message). dbTime: the database's now() read once
   * the verb had returned (after its commit). `selection`: a bulk redrive's queue and reason filter, with the
   * dead letters of the queue before it (id and reason), so what it should and should not have moved is known.
   */
  | {
      type: 'operator:action';
      /** The database's now() just before the verb was sent: anything of its targets after this is after the verb began. */
      dbBefore: number;
      seq: number;
      verb: OperatorVerb;
      via: OperatorPath;
      /** Via cli: the `stampede control` process's exit status (0 done, 2 refused, anything else an error). */
      exitCode?: number;
      /** Via cli: its command and arguments, without --by and --reason (`limit q --max-in-flight 12 ...`). */
      command?: string[];
      by: string;
      reason: string;
      queue?: string;
      jobIds: number[];
      outcome: 'ok' | 'refused';
      answer: string;
      refusal?: string;
      before: Record<string, string>;
      after: Record<string, string>;
      /** Per target, what was asked of it: a running job, a pending one, a done one (to be refused), ... */
      picked?: Record<string, string>;
      selection?: { reasonContains: string | null; deadBefore: { jobId: number; reason: string }[] };
    }
  /**
   * A forged request at the dashboard's door (harness/runner/dashboard-client.ts FORGERIES), sent just before
   * a verb the run issues there, naming the same verb and targets, confirmed, as `intruder` with a reason of
   * its own: the action by GET, a POST with no session, without the session's CSRF token, with a wrong one,
   * or from a foreign Origin. `status` and `answer` are the dashboard's response; `before`/`after` the
   * targets' states around it, read as operator:action reads them.
   */
  | {
      type: 'dashboard:forged';
      forgery: Forgery;
      verb: OperatorVerb;
      by: string;
      reason: string;
      queue?: string;
      jobIds: number[];
      status: number;
      answer: string;
      before: Record<string, string>;
      after: Record<string, string>;
    }
  /** The queue was resumed; dbTime is the resume's transaction start: claims that start after it may run. */
  | { type: 'queue:resumed'; queue: string; by: string }
  | { type: 'alert:crossed'; signal: string; value: number; threshold: number; direction: 'up' | 'down' }
  | {
      type: 'sample';
      depthByQueue: Record<string, number>;
      oldestUnclaimedAgeMs: Record<string, number>;
      deadLetterDepth: number;
      claimed: number;
      done: number;
      failed: number;
      dead: number;
      /** Dead tuples in the jobs table (pg_stat), when the sampler read them. */
      deadTuples?: number;
      /** Age of the oldest transaction holding the xmin horizon, ms (0: none), when the sampler read it. */
      xminAgeMs?: number;
      /** The engine sampler's figures per queue (what /metrics serves as stampede_queue_*). */
      queues?: Record<string, EngineSampledQueue>;
      /**
       * The harness's own reading (harness/runner/harness.sql HarnessQueueState), taken in
       * the engine sampler's transaction after its queries: the same snapshot and the same
       * now(), so every figure must match the engine's. The oracle judges the SLO and the
       * alerts on these, and checks the engine's figures against them (sampler-agrees).
       */
      harness?: {
        oldestUnclaimedAgeMs: Record<string, number>;
        deadLetterDepth: number;
        xminAgeMs: number;
        queues: Record<string, SampledQueue>;
        done: number;
      };
    }
  /** No Prometheus on this machine: the invariants that read one are inconclusive, and say how to install it. */
  | { type: 'prometheus:absent'; install: string }
  /** A scenario with `otel` on an installation without the OpenTelemetry SDK (harness/runner/otel-sdk.ts): its workers ran without it. */
  | { type: 'otel:absent'; missing: string[]; install: string }
  /** The runner set a declared limit or key weight at the command line (`limitsVia: 'cli'`): its command (without --by, --reason), exit status and what it printed. */
  | { type: 'control:setup'; command: string[]; exitCode: number; answer: string }
  /** A scenario's queue budget (`queueBudgets`), set through setQueueMaxAttempts before the load starts. */
  | { type: 'setup:queue-budget'; queue: string; maxAttempts: number }
  /**
   * An operator's typo at the command line (the cli-typos fault): the command, the bad input it must name, its exit
   * status and its `stampede control:` line (or what it printed), and what it could have changed, read before and
   * after: the typo'd job's and the queue's states, and the audit rows under the typist's name.
   */
  | {
      type: 'control:typo';
      command: string[];
      input: string;
      exitCode: number;
      answer: string;
      before: Record<string, string>;
      after: Record<string, string>;
      auditBefore: number;
      auditAfter: number;
    }
  /**
   * `stampede dashboard` as the dashboard-cli fault ran it (fault `seq`): the port it was asked for (`--port`, no
   * --host, no token), the start-up line it printed with the token left out (null: it printed none), the address's
   * host and port and the token's length and alphabet as printed, the machine's non-loopback addresses the harness
   * tried the port on, and its exit status after SIGTERM (null: it had to be killed) with the end of its stderr.
   */
  | {
      type: 'dashboard:cli';
      seq: number;
      askedPort: number;
      printed: string | null;
      host: string | null;
      port: number | null;
      tokenChars: number | null;
      tokenBase64url: boolean | null;
      offLoopback: string[];
      exitCode: number | null;
      stderr: string;
    }
  /**
   * One connection the harness made to the dashboard-cli fault's dashboard (fault `seq`): to the printed address or
   * to the same port on a non-loopback address (`where`), with the printed token, none, or a wrong one; whether
   * something answered (and its status: with the printed token, that of the page the login led to), the connection
   * was refused, or it failed otherwise (a timeout, its error).
   */
  | {
      type: 'dashboard:probe';
      seq: number;
      url: string;
      where: 'printed' | 'off-loopback';
      token: 'printed' | 'none' | 'wrong';
      outcome: 'answered' | 'refused' | 'failed';
      status: number | null;
      error: string | null;
    }
  /**
   * A read at the command line right after a change made there (`show <queue>`, `audit --queue <queue>`): what it
   * printed, and the change it must show (`verb`, by `by`; for a limit, the queue's state read after it).
   */
  | { type: 'control:read'; command: string[]; exitCode: number; output: string; verb: OperatorVerb; queue: string; by: string; state: string }
  /** The run's Prometheus could not start or answer (its error): the invariants that read it are inconclusive. */
  | { type: 'prometheus:failed'; error: string }
  /** The run's Prometheus started: the alert rules it loaded (for: as scaled) and from where, and its intervals. */
  | { type: 'prometheus:started'; rulesSource: string; dashboardSource: string; rules: LoadedRule[]; scrapeIntervalMs: number; evalIntervalMs: number; alertForScale: number }
  /**
   * Prometheus's ALERTS at the end of the run: each alert series (its labels, alertname included)
   * and the run times (t) of the rule evaluations that found it pending or firing, until `toT`.
   */
  | { type: 'prometheus:alerts'; toT: number; series: { labels: Record<string, string>; state: 'pending' | 'firing'; at: number[] }[] }
  /** Every sample Prometheus scraped of one metric over the run, per series, at the scrape's run time (t). */
  | { type: 'prometheus:series'; metric: string; series: ScrapedSeries[] }
  /**
   * The dashboard's queries, run against Prometheus over the run: what was sent (template
   * variables substituted), and how many series and points came back, or Prometheus's error.
   * `known`: the metric names Prometheus has scraped (series and metadata).
   */
  | { type: 'prometheus:dashboard'; source: string; known: string[]; queries: { where: string; expr: string; query: string; error?: string; series: number; points: number }[] }
  /** A live worker's RED counters as its own /metrics served them (red-metrics judges them against its events). */
  | { type: 'metrics:scraped'; workerId: string; red: RedCounts }
  | { type: 'run:phase'; phase: 'load' | 'drain' | 'check' | 'interrupted' }
  /**
   * Work the scenario put in place before the load started (delayed reminders, retries left in
   * backoff): what it is, the jobs, and the span of their run_at (database clock, epoch ms).
   */
  | { type: 'preload:enqueued'; origin: PreloadOrigin; queue: string; jobIds: number[]; runAtFrom: number | null; runAtTo: number | null }
  /**
   * What a worker slot's link proxy (node `worker-<i>`) saw its connections bind, over the run: executions of named
   * (prepared) statements and of unnamed ones (each Bind message names its statement, '' for the unnamed one).
   */
  | { type: 'link:statements'; namedBinds: number; unnamedBinds: number }
  /**
   * The day partitions of stampede.job_history (`job_history_pYYYYMMDD`) as the harness read them from the
   * catalog (harness/runner/archive-partitions.ts), not as the archiver reported them; dbTime is the
   * database's now() of the reading. Once a second while archive-retention is judged, and once after the
   * archiver stopped.
   */
  | { type: 'archive:partitions'; partitions: string[] }
);

/**
 * Payload fields a run recorded before they existed lacks: optional in the history, though every new run has
 * them. Only names: the fields and their types are the engine's (engine/events.ts).
 */
interface AddedLater {
  'job:claimed': 'crashCount' | 'dbLeaseExpiresAt' | 'fairnessKey' | 'leaseToken' | 'dbTakenAt';
  'job:completed': 'leaseToken';
  'lease:lost': 'leaseToken';
  'job:failed': 'durationMs' | 'maxAttempts';
  'lease:rescued': 'crashed';
  'outbox:delivered': 'durationMs';
  'worker:settings': 'agingMs' | 'rescue' | 'preparedStatements' | 'concurrency';
}

/** The `db…` prefix is the engine's mark of a database-clock field; the history names them without it (dbLeaseExpiresAt: leaseExpiresAt). */
type Undb<K> = K extends `db${infer R}` ? Uncapitalize<R> : K;

/** What a node reports, by name: its engine events, what the process reports of itself, and the harness handler's reports. */
type Reports = NodeEvents & HandlerReports;
/**
 * The reports that do not become history events of their name: a handler's `fault:bit` becomes `fault:evidence`;
 * the supervisor's events are the parent's own, and the runner records its processes itself (role, expected).
 */
const NOT_RECORDED = ['fault:bit', 'process:started', 'process:exited', 'supervisor:gave-up'] as const;
type RecordedName = Exclude<keyof Reports, (typeof NOT_RECORDED)[number]>;

type DbTimeOf<N> = N extends EventName ? DbTimeField<N> : never;
type Optional<T, K extends PropertyKey> = Omit<T, K> & Partial<Pick<T, Extract<K, keyof T>>>;

/**
 * A report as the history records it (fromReport): the event's database instant becomes the header's `dbTime`,
 * other `db…` fields lose the prefix, fields added later are optional.
 */
export type RecordedFields<N extends RecordedName> = Optional<
  { [K in keyof Reports[N] as K extends DbTimeOf<N> ? never : Undb<K>]: Reports[N][K] },
  Undb<N extends keyof AddedLater ? AddedLater[N] : never>
>;

/** A worker's settings as recorded: each queue's `timeoutMs` is absent from runs recorded before workers reported it. */
type RecordedAs<N extends RecordedName> = N extends 'worker:settings' ? Omit<RecordedFields<N>, 'queues'> & { queues: Record<string, QueueSettings> } : RecordedFields<N>;

type Reported = { [N in RecordedName]: { type: N } & RecordedAs<N> }[RecordedName];

/**
 * A node's report as a history event (without the recorder's `t`, `node`, `nodeTime`): the one conversion of
 * every reported event, by ENGINE_EVENTS' declaration of its database instant.
 */
export function fromReport<N extends RecordedName>(name: N, payload: Reports[N]): { type: N; dbTime?: number } & RecordedFields<N> {
  const dbField = Object.hasOwn(ENGINE_EVENTS, name) ? (ENGINE_EVENTS[name as EventName] as { dbTime?: string }).dbTime : undefined;
  const out: Record<string, unknown> = { type: name };
  for (const [k, v] of Object.entries(payload as object)) {
    if (k === dbField) out.dbTime = v;
    else out[/^db[A-Z]/.test(k) ? k[2].toLowerCase() + k.slice(3) : k] = v;
  }
  return out as { type: N; dbTime?: number } & RecordedFields<N>;
}

/** Whether a node's report becomes a history event of its own name (fromReport). */
export function isRecorded(name: keyof Reports): name is RecordedName {
  return !(NOT_RECORDED as readonly string[]).includes(name);
}

/** One queue's figures at a sample: rows by state, due ones, expired leases not yet rescued, dead letters, the oldest due job's age (ms). */
/** The engine sampler's figures of one queue, with what it says it estimated. */
export type EngineSampledQueue = SampledQueue & {
  /** pending, failed and due are estimates (past the queue's share of the round's row budget). */
  estimated: boolean;
  /** deadLetters is an estimate (its being above 0 never is). */
  deadLettersEstimated?: boolean;
  /** Runs recorded before estimates: the counts stopped at a per-queue cap and were lower bounds. */
  capped?: boolean;
};

export interface SampledQueue {
  pending: number;
  failed: number;
  due: number;
  claimed: number;
  overdue: number;
  deadLetters: number;
  oldestMs: number;
}

/** A queue with no row in any state: what a side that does not list a queue read for it. */
export const NO_ROWS: Readonly<SampledQueue> = { pending: 0, failed: 0, due: 0, claimed: 0, overdue: 0, deadLetters: 0, oldestMs: 0 };

/** One series as Prometheus stored it: its labels (the target's included) and its samples as [t, value]. */
export interface ScrapedSeries {
  labels: Record<string, string>;
  samples: [number, number][];
}

/** A worker's RED series, summed over their other labels, by queue; durations by outcome label, then queue. */
export interface RedCounts {
  claimed: Record<string, number>;
  completed: Record<string, number>;
  failed: Record<string, number>;
  leasesLost: Record<string, number>;
  durations: Record<string, Record<string, number>>;
  /** Jobs this worker dead-lettered (by its failure path or its rescuer). Absent from runs recorded before it was read. */
  deadLettered?: Record<string, number>;
  /** Expired leases this worker's rescuer took back. Absent from runs recorded before it was read. */
  leasesExpired?: Record<string, number>;
}

/** Where preloaded work comes from: `delayed` jobs enqueued to run later, `retry` jobs that failed an attempt and wait out their backoff. */
export type PreloadOrigin = 'delayed' | 'retry';

/** One step of the simulated database clock (a `db-clock-jump` fault): at history t, the database's now() went from `fromMs` to `toMs`. */
export interface DbClockStep {
  t: number;
  fromMs: number;
  toMs: number;
}

/** The database clock steps the history records, in order. */
export function dbClockSteps(history: readonly HistoryEvent[]): DbClockStep[] {
  const out: DbClockStep[] = [];
  for (const e of history) {
    if (e.type !== 'fault:injected' || e.fault !== 'db-clock-jump') continue;
    const { dbBeforeMs, dbAfterMs } = e.detail;
    if (typeof dbBeforeMs === 'number' && typeof dbAfterMs === 'number') out.push({ t: e.t, fromMs: dbBeforeMs, toMs: dbAfterMs });
  }
  return out;
}

/**
 * Time that really passed between two readings of the database clock (epoch
 * ms), a ≤ b: b - a less what any step of the clock skipped between them. A
 * job due before a step and claimed after it did not wait the hour the clock
 * skipped; one whose run_at the step skipped over waited from the step.
 */
export function elapsedOnDbClock(a: number, b: number, steps: readonly DbClockStep[]): number {
  let skipped = 0;
  for (const s of steps) skipped += Math.max(0, Math.min(b, s.toMs) - Math.max(a, s.fromMs));
  return b - a - skipped;
}

/**
 * When a job with this run_at (epoch ms, database clock) became due: at its
 * run_at, unless a step of the database clock skipped over it, in which case
 * at the step's end. A job's wait is measured from here: the minutes a step
 * skipped are not minutes anyone could have run it in.
 */
export function becameDueAt(runAtMs: number, steps: readonly DbClockStep[]): number {
  for (const s of steps) if (runAtMs > s.fromMs && runAtMs <= s.toMs) return s.toMs;
  return runAtMs;
}

/** The control verbs an operator fault issues, as the audit names them (engine/control). */
/** How a forged dashboard request differs from the operator's own (dashboard:forged). */
export type Forgery = 'get' | 'no-session' | 'no-csrf' | 'wrong-csrf' | 'foreign-origin';

export type OperatorVerb = 'cancel' | 'retry' | 'dead-letter' | 'redrive' | 'pause' | 'resume' | 'set-limits';

/** What a generated job is for; the handler module reads it from the payload. `failing` throws on every attempt: it runs out its budget. */
export type JobKind = 'normal' | 'poison' | 'slow' | 'flaky' | 'effect' | 'downstream' | 'failing' | 'outbox';

/** One queue's settings as a worker resolved them (engine/worker/options.ts); `timeoutMs` is absent from runs recorded before workers reported it. */
export type QueueSettings = Optional<WorkerQueueSettings, 'timeoutMs'>;

export type HistoryEventType = HistoryEvent['type'];
export type EventOf<T extends HistoryEventType> = Extract<HistoryEvent, { type: T }>;

/** Final database state that checkers read beside the history. */
export interface FinalState {
  /** `kind` is the job's payload kind when the runner could read one (jobs the nemesis enqueued have no op to look it up by). */
  jobs: {
    id: number;
    queue: string;
    state: string;
    attempts: number;
    priority: number;
    idempotencyKey: string | null;
    kind?: string;
    /** run_at as epoch ms (database clock), when the runner read it. */
    runAtMs?: number;
    /** Pending with a run_at after the database's now() when the state was read: scheduled for later (a cron node's lookahead), not unfinished. */
    notDueYet?: boolean;
    /** The attempt budget, the crashes charged and the error entries recorded (absent from older stored runs). */
    maxAttempts?: number;
    crashCount?: number;
    errorCount?: number;
    /** Read from stampede.job_history: the archiver moved it. `finishedAtMs`/`archivedAtMs` are database time. */
    archived?: boolean;
    finishedAtMs?: number;
    archivedAtMs?: number;
    /** The payload's producerKey (jobs the enqueue-retry fault enqueued), so a key's jobs can be counted without trusting the key column. */
    producerKey?: string;
    /** The payload's op: which offer of the load generator enqueued it (a failover that reuses an id shows as another op). */
    op?: number;
  }[];
  /**
   * `code` (why the job died, engine/dead-letters.ts), `attempts` and `errorCount` as the dead-letter row carries
   * them (absent from older stored runs, and `code` from a peer engine's, which has none).
   */
  deadLetters: { jobId: number; code?: DeadLetterCode; reason: string; attempts?: number; errorCount?: number }[];
  /** Effect rows by effect key: how many times each job's side effect was applied. */
  effects: Record<string, number>;
  /** Every committed effect row: which job's effect, written by which worker (absent from older stored runs). */
  effectRows?: { key: string; jobId: number; workerId: string; appliedAtMs?: number }[];
  /** The dedup keys (stampede.effect_keys) still present at the end: the pruner deleted the others. */
  effectKeys?: string[];
  /** The database's now() when the final state was read, epoch ms. */
  dbNowMs?: number;
  /** Every schedule as the database holds it (absent from older stored runs). */
  schedules?: { id: string; cron: string; timezone: string; dstPolicy: string; catchUp: string }[];
  /** stampede.control_audit, every row (absent from older stored runs). */
  audit?: { verb: string; queue: string; jobId: number | null; actor: string; reason: string }[];
}

/** Invariant outcome, three-valued as in Jepsen: a checker that cannot decide says unknown. */
export interface InvariantResult {
  name: string;
  /**
   * Held (true), violated (false), undecided ('unknown'), or 'not-promised': the engine under test does not make
   * the promise this invariant judges (harness/engines/promises.ts), so it is neither passed nor failed.
   */
  pass: boolean | 'unknown' | 'not-promised';
  /** The measured figure, in words with units (e.g. "0 lost of 15,000"). */
  figure: string;
  /** The bound it was held to (e.g. "0"). */
  bound: string;
  /**
   * How many events or cases it judged that could have shown a violation: the telling ones, not
   * everything it read (no-early-start counts retries in backoff, delayed jobs and cron rows, not
   * every claim). A check that judged nothing never passes (runCheckers makes it unknown).
   */
  judged: Judged;
  /** Up to a few concrete examples when it failed. */
  examples?: unknown[];
  /**
   * Set when the check could not run on this machine for want of a tool (a
   * Prometheus): what to install. Such a result is always `unknown`; it makes a
   * run inconclusive only when the run is strict (CI, the gate), so a
   * developer's run without the tool still says PASS or FAIL on the rest, and
   * lists it as not checked here.
   */
  notHere?: string;
  /** Set with pass 'not-promised': which promise the engine does not make, and where it says so. */
  notPromised?: string;
}

/** A count of judged events and what they were, as a plural noun phrase for reports ("retries in backoff"). */
export interface Judged {
  n: number;
  what: string;
}

/** "1,234 retries in backoff", for tables; a result stored before checkers counted what they judged says so. */
export function judgedText(judged: Judged | undefined): string {
  return judged ? `${judged.n.toLocaleString('en-US')} ${judged.what}` : 'not recorded';
}

export function eventsOf<T extends HistoryEventType>(history: readonly HistoryEvent[], type: T): EventOf<T>[] {
  return history.filter((e): e is EventOf<T> => e.type === type);
}

/**
 * Whether a dead letter is a crash loop's conviction: by its `code`, which the engine writes (migration 0018); by
 * the words the engine has always begun that reason with only for a run stored before the code was recorded.
 */
export function convictedAsCrashLoop(letter: FinalState['deadLetters'][number]): boolean {
  return letter.code !== undefined ? letter.code === 'crash_loop' : letter.reason.startsWith('crashed its worker');
}

/**
 * The worker slot's id of a worker process's id: `worker-1` for `worker-1.3` (the fleet names each process
 * `worker-<slot>.<generation>`, harness/runner/fleet.ts), and an id without a generation as it is. In a run whose slots
 * reuse worker ids (reuseWorkerIds) the slot's id is what the database holds for every process of the slot.
 */
export function slotIdOf(workerId: string): string {
  return workerId.replace(/\.\d+$/, '');
}
