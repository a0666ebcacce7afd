import { ValidationError } from '../../engine/errors.ts';
import { validateQueueName } from '../../engine/validate.ts';
import { validateTimeZone } from '../../engine/cron/zone.ts';

/**
 * A scenario's fault timeline, as data. Each entry is one fault at `atS`
 * seconds after the load starts, optionally repeated every `everyS` ± `jitterS`
 * seconds until `untilS`. `harness/faults/plan.ts` expands the timeline into
 * concrete timed actions with the run's seed; the injectors carry them out.
 */
export interface FaultTiming {
  /** First (or only) time, seconds after the load starts. */
  atS: number;
  /** Repeat period in seconds. Default: no repeat. */
  everyS?: number;
  /** Each gap is everyS plus a uniform draw in [-jitterS, +jitterS]. Must be below everyS. Default 0. */
  jitterS?: number;
  /** No repeat after this many seconds. Default: the scenario's durationS. */
  untilS?: number;
}

/** A process to act on: `worker:<i>`, `scheduler:<i>`, or `:random` (a seeded pick per occurrence) or `:all`. */
export type NodeRef = `${'worker' | 'scheduler'}:${number | 'random' | 'all'}`;

export type FaultSpec = FaultTiming &
  (
    /**
     * SIGKILL. `point` picks when: any moment, while a handler runs, inside an effect's transaction (written,
     * not committed: it rolls back), or after an effect committed but before the worker heard back.
     */
    | { fault: 'worker-kill'; target?: NodeRef; point?: 'any' | 'mid-handler' | 'in-effect' | 'after-effect' }
    /**
     * SIGSTOP for forS seconds, then SIGCONT: slow but alive. `point` picks when: at once, or the first
     * armed target whose job reaches the point freezes there: `in-effect` (inside an effect's transaction,
     * not committed) or `before-report` (a slow job's work done, its completion not yet sent). `resume`:
     * after forS (default), or `on-takeover`: as soon as another worker claims the frozen job (forS at most).
     */
    | { fault: 'worker-stop'; target?: NodeRef; forS: number; point?: 'any' | 'in-effect' | 'before-report' | 'mid-slow-job'; resume?: 'after' | 'on-takeover' }
    /** Set the node's clock offset to skewMs (positive: ahead). */
    | { fault: 'clock-skew'; target?: NodeRef; skewMs: number }
    /** Step the node's clock by jumpMs (positive: forward), as NTP or `date -s` would. */
    | { fault: 'clock-jump'; target?: NodeRef; jumpMs: number }
    /**
     * A worker's clock runs slow for forS seconds: it advances `rate` (0 < rate < 1) times as fast as the
     * database's, and so do its sleeps (a starved VM, a host clock losing time). Its heartbeats and its own
     * lease-loss deadline come late on the database clock: its lease can expire, and another worker take
     * the job, before it either renews or gives the lease up, so its next renewal must be refused by the
     * fence. Then its rate is true again (its reading stays behind). Evidence: renewals of the node's that
     * the fence refused meanwhile (`lease:lost` at phase heartbeat).
     */
    | { fault: 'clock-rate'; target?: NodeRef; rate: number; forS: number }
    /**
     * Set the node's clock to leadS seconds before a real transition of a real zone, so it crosses it. The
     * schedules' progress is set downS seconds before that (every scheduler was down that long; default: the
     * node's catch-up window), so the node first catches up what it missed under each catch-up policy.
     */
    | { fault: 'dst'; target?: NodeRef; zone: string; transition: 'spring-forward' | 'fall-back'; year?: number; leadS?: number; downS?: number }
    /**
     * Step the database's clock forward by jumpMs (NTP correcting a drifted clock, a VM resumed after
     * suspend), through the simulated database clock (docs/time.md): every reader of now() moves at once,
     * and every job whose run_at fell inside the step is due. `target`: nodes whose own clocks step with
     * it (scheduler nodes on the same host or NTP source); none unless named. Instead of `jumpMs`,
     * `minuteAtS` steps forward just enough (under a minute) that a minute of the database clock begins at
     * that second of the run: a cron minute comes due at a chosen moment (inside a failover's lag window).
     */
    | { fault: 'db-clock-jump'; jumpMs?: number; minuteAtS?: number; target?: NodeRef }
    /**
     * Enqueue count jobs whose payload crashes the handler's process on every attempt. `maxAttempts`:
     * the budget their producer asked for (default the scenario's); crash detection must retire them
     * after maxCrashes whatever it is.
     */
    | { fault: 'poison-pill'; count: number; queue?: string; maxAttempts?: number }
    /**
     * Enqueue count jobs due at one instant (one bulk insert with one run_at), of `kind` (default normal), with
     * `fairnessKey` if given (a tenant's flood): due at the database's now, or `dueAgoS` seconds before it (a backlog
     * replayed late, its jobs dated when they were asked for: the queue's oldest unclaimed job is that old at once).
     */
    | { fault: 'thundering-herd'; count: number; queue?: string; kind?: 'normal' | 'downstream'; fairnessKey?: string; dueAgoS?: number }
    /**
     * An operator pauses the queue (engine/control pauseQueue) for forS seconds, then resumes it. `suspect`:
     * first a poison is enqueued in the queue and the pause comes as it is claimed, so its worker dies and
     * the crash's suspect falls due while the queue is paused (the suspects' claim path must honour the pause).
     */
    | { fault: 'queue-pause'; forS: number; queue?: string; suspect?: boolean; via?: OperatorPath }
    /** An operator pauses a schedule (pauseSchedule: no more materializing) for forS seconds, then resumes it. */
    | { fault: 'schedule-pause'; forS: number; schedule: string; via?: Exclude<OperatorPath, 'cli'> }
    /**
     * An operator cancels jobs (cancelJob): `running` claimed ones (of `kinds`, default slow), `pending` ones
     * (not yet due or waiting), and `done` ones, which the engine must refuse.
     */
    | { fault: 'cancel'; running?: number; pending?: number; done?: number; queue?: string; kinds?: string; via?: OperatorPath }
    /** An operator runs jobs now (retryJob): `failed` ones waiting out a backoff, `dead` ones whose attempts ran out. */
    | { fault: 'retry'; failed?: number; dead?: number; queue?: string; via?: OperatorPath }
    /** An operator dead-letters jobs by hand (deadLetterJob): `running` claimed ones (of `kinds`) and `pending` ones. */
    | { fault: 'dead-letter'; running?: number; pending?: number; queue?: string; kinds?: string; via?: OperatorPath }
    /** An operator redrives a queue's dead letters in bulk (redriveDeadLetters), those whose reason contains `matching`. */
    | { fault: 'redrive'; queue?: string; matching?: string; via?: OperatorPath }
    /** An operator sets a queue's global limits (setQueueLimits); a limit left out is removed. */
    | { fault: 'set-limits'; queue?: string; maxInFlight?: number; maxStartsPerSecond?: number; via?: OperatorPath }
    /**
     * An operator's typos at the command line (`stampede control`, its own process): a dead job's id with a stray
     * letter, a zero limit, a misspelt command, a weight of 0, a change without --by. Each must be refused (exit 2)
     * naming the bad input, and change nothing. The typo'd id is that of a job an operator dead-lettered (`queue`'s),
     * so a parser that read "17x" as 17 would retry it.
     */
    | { fault: 'cli-typos'; queue?: string }
    /**
     * An operator starts `stampede dashboard` (its own process) against the run's database with no --host and a
     * --port the harness found free on loopback, and no token given. The harness reads the address it prints, tries
     * it with the printed token, with none and with a wrong one, tries the same port on each of the machine's
     * non-loopback addresses, then stops it with SIGTERM (`dashboard:cli`, `dashboard:probe`).
     */
    | { fault: 'dashboard-cli' }
    /** pg_terminate_backend on the engine's connections. */
    | { fault: 'db-terminate-backends'; scope?: 'workers' | 'all' }
    /**
     * Set every schedule's progress mark backS seconds before the database's now (a restored backup, an
     * operator's UPDATE, a node that read a stale mark): the nodes compute those occurrences again, and
     * the unique occurrence key must collapse them onto the rows already written.
     */
    | { fault: 'cron-rewind'; backS: number }
    /**
     * Restart the Postgres server; it is down for downS seconds. Mode `crash`: SIGKILL the postmaster. `lullS`
     * (crash only): first, for that long, the load generator offers nothing and the server's WAL writer is
     * stopped, so the workers' latest commits are at risk unless each waited for its own WAL flush.
     */
    | { fault: 'db-restart'; mode?: 'fast' | 'immediate' | 'crash'; downS?: number; lullS?: number }
    /** Hold `connections` connections busy for forS seconds. */
    | { fault: 'pool-exhaust'; connections: number; forS: number }
    /** Keep a transaction open for forS seconds, pinning the xmin horizon (dead tuples pile up). */
    | { fault: 'xmin-hold'; forS: number }
    /**
     * SIGTERM a worker, as a deploy or a scale-down does: it stops claiming, waits its grace (2 s), hands
     * back what is still running (ReleaseJobs, `lease:released`), exits, and the supervisor starts it again.
     */
    | { fault: 'worker-restart'; target?: NodeRef }
    /** SIGKILL the outbox relay that has the most requests open at the sink (waiting up to 5 s for one). */
    | { fault: 'relay-kill' }
    /**
     * A producer that lost the answer to its enqueue re-sends it with the same idempotency key, count
     * times: the harness enqueues, drops the acknowledgement, and enqueues again.
     */
    | { fault: 'enqueue-retry'; count: number; queue?: string }
    /** The handlers' shared dependency fails every call (or errorRate of them) for forS seconds. */
    | { fault: 'dependency-outage'; forS: number; errorRate?: number }
    /*
     * Link faults (docs/network-faults.md): on the harness's own TCP proxy between each targeted worker
     * process and Postgres (harness/faults/proxy.ts). `direction`: `toServer` (requests), `toClient`
     * (answers) or `both` (default).
     */
    /**
     * A blackhole for forS seconds: nothing is forwarded, connections stay open (held bytes are delivered on heal, as
     * TCP would). `startsOn: 'claim'`: it begins at the first claim the target sends from atS on (the claim itself
     * held), so a claim is in flight whenever it begins; forS counts from then.
     */
    | { fault: 'partition'; target?: NodeRef; forS: number; direction?: LinkDirection; startsOn?: 'claim' }
    /** Every chunk delayed by latencyMs ± jitterMs (order kept) for forS seconds. */
    | { fault: 'latency'; target?: NodeRef; forS: number; latencyMs: number; jitterMs?: number; direction?: LinkDirection }
    /** At most bytesPerS bytes a second for forS seconds. */
    | { fault: 'bandwidth'; target?: NodeRef; forS: number; bytesPerS: number; direction?: LinkDirection }
    /** Every open connection destroyed with an RST. */
    | { fault: 'reset'; target?: NodeRef }
    /**
     * The next transaction of `point` that commits loses its answer: the connection is reset after the server
     * committed, before the client hears so. `enqueue` cuts the nemesis's own producer (no target), which then
     * re-sends with the same idempotency key; `claim`, `complete` and `effect` cut the targeted workers.
     */
    | { fault: 'reset-after-commit'; target?: NodeRef; point: 'enqueue' | 'claim' | 'complete' | 'effect' }
    /*
     * Database-host faults (docs/network-faults.md), each on the scenario's own Postgres.
     */
    /** SIGSTOP every process of the server (the postmaster and its children) for forS seconds, then SIGCONT. Embedded server only. */
    | { fault: 'db-pause'; forS: number }
    /** Every free connection slot held by the nemesis for forS seconds, and the workers' connections terminated once, so they must reconnect into a full server. */
    | { fault: 'connections-exhausted'; forS: number }
    /** default_transaction_read_only on for forS seconds (ALTER SYSTEM and a reload), every session's open transaction ended, then reverted. */
    | { fault: 'read-only'; forS: number }
    /** stampede.jobs locked ACCESS EXCLUSIVE for forS seconds (`lock`), or a DDL queued behind a long reader, which queues everyone behind it (`ddl-behind-reader`). */
    | { fault: 'lock-jobs-table'; forS: number; mode?: 'lock' | 'ddl-behind-reader' }
    /*
     * Failover (docs/failover.md): the run's embedded Postgres gets a streaming replica at start-up, in
     * `replication` mode, and every client reaches the primary through the harness's proxy (the VIP).
     */
    /**
     * The replication link held for lagS seconds (the standby falls behind; under sync every commit
     * waits), then the primary SIGKILLed, the standby promoted (pg_promote) and the VIP re-pointed at it.
     * At most one per scenario.
     */
    | { fault: 'failover'; replication: 'sync' | 'async'; lagS?: number; onMinute?: boolean }
  );

/** Which way a link fault acts: requests (`toServer`), answers (`toClient`), or both. */
export type LinkDirection = 'both' | 'toServer' | 'toClient';
const DIRECTION = ['both', 'toServer', 'toClient'] as const;

export type FaultName = FaultSpec['fault'];

/**
 * How an operator fault issues its verb: the engine's API, the dashboard's POST action (the runner serves one
 * for the run), or the `stampede control` command line (a process per verb, as an operator's shell runs it).
 */
export type OperatorPath = 'api' | 'dashboard' | 'cli';
const VIA = { kind: ['api', 'dashboard', 'cli'] } as const;
/** A schedule's pause has no audited command line verb (`stampede schedules pause` is not an operator action). */
const SCHEDULE_VIA = { kind: ['api', 'dashboard'] } as const;
/** The operator faults, whose verbs go through `via`. */
export const OPERATOR_FAULTS: readonly FaultName[] = ['queue-pause', 'schedule-pause', 'cancel', 'retry', 'dead-letter', 'redrive', 'set-limits'];

/** Every fault's parameters: the kind of each, and whether it is required. */
const PARAMS: Record<FaultName, Record<string, { kind: 'node' | 'posNum' | 'num' | 'int' | 'rate' | 'zone' | 'queue' | 'year' | 'bool' | 'text' | readonly string[]; required?: boolean }>> = {
  'worker-kill': { target: { kind: 'node' }, point: { kind: ['any', 'mid-handler', 'in-effect', 'after-effect'] } },
  'worker-stop': {
    target: { kind: 'node' },
    forS: { kind: 'posNum', required: true },
    point: { kind: ['any', 'in-effect', 'before-report', 'mid-slow-job'] },
    resume: { kind: ['after', 'on-takeover'] },
  },
  'clock-skew': { target: { kind: 'node' }, skewMs: { kind: 'num', required: true } },
  'clock-jump': { target: { kind: 'node' }, jumpMs: { kind: 'num', required: true } },
  'clock-rate': { target: { kind: 'node' }, rate: { kind: 'rate', required: true }, forS: { kind: 'posNum', required: true } },
  dst: {
    target: { kind: 'node' },
    zone: { kind: 'zone', required: true },
    transition: { kind: ['spring-forward', 'fall-back'], required: true },
    year: { kind: 'year' },
    leadS: { kind: 'posNum' },
    downS: { kind: 'posNum' },
  },
  'db-clock-jump': { target: { kind: 'node' }, jumpMs: { kind: 'posNum' }, minuteAtS: { kind: 'posNum' } },
  'poison-pill': { count: { kind: 'int', required: true }, queue: { kind: 'queue' }, maxAttempts: { kind: 'int' } },
  'thundering-herd': { count: { kind: 'int', required: true }, queue: { kind: 'queue' }, kind: { kind: ['normal', 'downstream'] }, fairnessKey: { kind: 'text' }, dueAgoS: { kind: 'posNum' } },
  'queue-pause': { forS: { kind: 'posNum', required: true }, queue: { kind: 'queue' }, suspect: { kind: 'bool' }, via: VIA },
  'schedule-pause': { forS: { kind: 'posNum', required: true }, schedule: { kind: 'text', required: true }, via: SCHEDULE_VIA },
  cancel: { running: { kind: 'int' }, pending: { kind: 'int' }, done: { kind: 'int' }, queue: { kind: 'queue' }, kinds: { kind: 'text' }, via: VIA },
  retry: { failed: { kind: 'int' }, dead: { kind: 'int' }, queue: { kind: 'queue' }, via: VIA },
  'dead-letter': { running: { kind: 'int' }, pending: { kind: 'int' }, queue: { kind: 'queue' }, kinds: { kind: 'text' }, via: VIA },
  redrive: { queue: { kind: 'queue' }, matching: { kind: 'text' }, via: VIA },
  'set-limits': { queue: { kind: 'queue' }, maxInFlight: { kind: 'int' }, maxStartsPerSecond: { kind: 'posNum' }, via: VIA },
  'cli-typos': { queue: { kind: 'queue' } },
  'dashboard-cli': {},
  'db-terminate-backends': { scope: { kind: ['workers', 'all'] } },
  'cron-rewind': { backS: { kind: 'posNum', required: true } },
  'db-restart': { mode: { kind: ['fast', 'immediate', 'crash'] }, downS: { kind: 'posNum' }, lullS: { kind: 'posNum' } },
  'pool-exhaust': { connections: { kind: 'int', required: true }, forS: { kind: 'posNum', required: true } },
  'xmin-hold': { forS: { kind: 'posNum', required: true } },
  'dependency-outage': { forS: { kind: 'posNum', required: true }, errorRate: { kind: 'rate' } },
  'worker-restart': { target: { kind: 'node' } },
  'relay-kill': {},
  'enqueue-retry': { count: { kind: 'int', required: true }, queue: { kind: 'queue' } },
  partition: { target: { kind: 'node' }, forS: { kind: 'posNum', required: true }, direction: { kind: DIRECTION }, startsOn: { kind: ['claim'] } },
  latency: {
    target: { kind: 'node' },
    forS: { kind: 'posNum', required: true },
    latencyMs: { kind: 'posNum', required: true },
    jitterMs: { kind: 'posNum' },
    direction: { kind: DIRECTION },
  },
  bandwidth: { target: { kind: 'node' }, forS: { kind: 'posNum', required: true }, bytesPerS: { kind: 'int', required: true }, direction: { kind: DIRECTION } },
  reset: { target: { kind: 'node' } },
  'reset-after-commit': { target: { kind: 'node' }, point: { kind: ['enqueue', 'claim', 'complete', 'effect'], required: true } },
  'db-pause': { forS: { kind: 'posNum', required: true } },
  'connections-exhausted': { forS: { kind: 'posNum', required: true } },
  'read-only': { forS: { kind: 'posNum', required: true } },
  'lock-jobs-table': { forS: { kind: 'posNum', required: true }, mode: { kind: ['lock', 'ddl-behind-reader'] } },
  failover: { replication: { kind: ['sync', 'async'], required: true }, lagS: { kind: 'posNum' }, onMinute: { kind: 'bool' } },
};

/** How long the replication link is held before the primary dies, when a failover names no lagS. */
export const DEFAULT_FAILOVER_LAG_S = 2;

/** Faults that act on the link between a worker process and Postgres: the scenario's workers connect through the harness's proxies. */
export const LINK_FAULTS: ReadonlySet<FaultName> = new Set(['partition', 'latency', 'bandwidth', 'reset', 'reset-after-commit']);

export const FAULT_NAMES = Object.keys(PARAMS) as FaultName[];
const TIMING = ['atS', 'everyS', 'jitterS', 'untilS'];
const NODE_REF = /^(worker|scheduler):(\d+|random|all)$/;

/** How many processes of each role the scenario runs, to check targets against. */
export interface FaultContext {
  workers: number;
  schedulers: number;
  durationS: number;
}

export function parseNodeRef(ref: string): { role: 'worker' | 'scheduler'; index: number | 'random' | 'all' } | undefined {
  const m = NODE_REF.exec(ref);
  if (!m) return undefined;
  return { role: m[1] as 'worker' | 'scheduler', index: /^\d+$/.test(m[2]) ? Number(m[2]) : (m[2] as 'random' | 'all') };
}

const show = (v: unknown) => (typeof v === 'string' ? `"${v}"` : JSON.stringify(v));

/** Checks a fault timeline; throws ValidationError naming the field, e.g. `scenario.faults[2].forS`. */
export function validateFaults(faults: unknown, ctx: FaultContext, field = 'faults'): asserts faults is FaultSpec[] {
  if (!Array.isArray(faults)) throw new ValidationError(field, `expected an array of faults, got ${show(faults)}`);
  faults.forEach((f, i) => validateFault(f, ctx, `${field}[${i}]`));
  // One replica per run: a second failover would need a standby of the promoted standby.
  const failovers = faults.map((f, i) => [f as { fault?: unknown; everyS?: unknown }, i] as const).filter(([f]) => f.fault === 'failover');
  if (failovers.length > 1) throw new ValidationError(`${field}[${failovers[1][1]}]`, `a scenario has at most one failover; the first is ${field}[${failovers[0][1]}]`);
  if (failovers.length === 1 && failovers[0][0].everyS !== undefined) throw new ValidationError(`${field}[${failovers[0][1]}].everyS`, 'a failover happens once; leave everyS out');
}

function validateFault(f: unknown, ctx: FaultContext, field: string): void {
  if (typeof f !== 'object' || f === null || Array.isArray(f)) throw new ValidationError(field, `expected { fault, atS, ... }, got ${show(f)}`);
  const o = f as Record<string, unknown>;
  const spec = typeof o.fault === 'string' && Object.hasOwn(PARAMS, o.fault) ? PARAMS[o.fault as FaultName] : undefined;
  if (typeof o.fault !== 'string' || !spec) throw new ValidationError(`${field}.fault`, `expected one of ${FAULT_NAMES.join(', ')}, got ${show(o.fault)}`);
  const secs = (key: string, required: boolean) => {
    const v = o[key];
    if (v === undefined && !required) return;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new ValidationError(`${field}.${key}`, `expected seconds (a number >= 0), got ${show(v)}`);
  };
  secs('atS', true);
  secs('everyS', false);
  secs('jitterS', false);
  secs('untilS', false);
  if (o.atS as number > ctx.durationS) throw new ValidationError(`${field}.atS`, `${o.atS} s is after the run's end (durationS ${ctx.durationS})`);
  if (o.everyS !== undefined && (o.everyS as number) <= 0) throw new ValidationError(`${field}.everyS`, `expected a period above 0 s, got ${o.everyS}`);
  if (o.jitterS !== undefined && (o.everyS === undefined || (o.jitterS as number) >= (o.everyS as number))) {
    throw new ValidationError(`${field}.jitterS`, `expected less than everyS (${o.everyS ?? 'not set'}), got ${o.jitterS}`);
  }
  if (o.untilS !== undefined && (o.untilS as number) < (o.atS as number)) throw new ValidationError(`${field}.untilS`, `expected >= atS (${o.atS}), got ${o.untilS}`);
  for (const key of Object.keys(o)) {
    if (key !== 'fault' && !TIMING.includes(key) && !spec[key]) {
      throw new ValidationError(`${field}.${key}`, `is not a parameter of ${o.fault}; expected one of ${[...TIMING, ...Object.keys(spec)].join(', ')}`);
    }
  }
  for (const [key, p] of Object.entries(spec)) {
    const v = o[key];
    const f2 = `${field}.${key}`;
    if (v === undefined) {
      if (p.required) throw new ValidationError(f2, `is required for ${o.fault}`);
      continue;
    }
    if (Array.isArray(p.kind)) {
      if (!p.kind.includes(v as string)) throw new ValidationError(f2, `expected one of ${p.kind.join(', ')}, got ${show(v)}`);
      continue;
    }
    switch (p.kind) {
      case 'posNum':
        if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new ValidationError(f2, `expected a number above 0, got ${show(v)}`);
        break;
      case 'num':
        if (typeof v !== 'number' || !Number.isFinite(v)) throw new ValidationError(f2, `expected a number, got ${show(v)}`);
        break;
      case 'int':
        if (!Number.isInteger(v) || (v as number) < 1) throw new ValidationError(f2, `expected an integer >= 1, got ${show(v)}`);
        break;
      case 'rate':
        if (typeof v !== 'number' || !(v > 0 && v <= 1)) throw new ValidationError(f2, `expected a fraction in (0, 1], got ${show(v)}`);
        break;
      case 'bool':
        if (typeof v !== 'boolean') throw new ValidationError(f2, `expected true or false, got ${show(v)}`);
        break;
      case 'text':
        if (typeof v !== 'string' || v.length === 0 || v.length > 200) throw new ValidationError(f2, `expected a non-empty string of at most 200 characters, got ${show(v)}`);
        break;
      case 'year':
        if (!Number.isInteger(v) || (v as number) < 1970 || (v as number) > 2100) throw new ValidationError(f2, `expected a year 1970-2100, got ${show(v)}`);
        break;
      case 'zone':
        validateTimeZone(v, f2);
        break;
      case 'queue':
        validateQueueName(v, f2);
        break;
      case 'node':
        validateTarget(v, ctx, f2);
        break;
    }
  }
  if (o.fault === 'reset-after-commit' && o.point === 'enqueue' && o.target !== undefined) {
    throw new ValidationError(`${field}.target`, `point "enqueue" cuts the nemesis's own producer, not a worker; leave target out`);
  }
  if (o.fault === 'reset-after-commit' && o.point === 'enqueue') return;
  if (o.fault === 'clock-rate' && o.rate === 1) throw new ValidationError(`${field}.rate`, `expected a rate below 1 (a clock that runs slow), got 1`);
  if (o.fault === 'clock-rate' && typeof o.target === 'string' && o.target.startsWith('scheduler:')) {
    throw new ValidationError(`${field}.target`, `clock-rate slows a worker's clock; expected "worker:<i>", "worker:random" or "worker:all", got ${show(o.target)}`);
  }
  if (LINK_FAULTS.has(o.fault as FaultName) && typeof o.target === 'string' && o.target.startsWith('scheduler:')) {
    throw new ValidationError(`${field}.target`, `${o.fault} acts on a worker's link to Postgres; expected "worker:<i>", "worker:random" or "worker:all", got ${show(o.target)}`);
  }
  if (o.fault === 'db-clock-jump' && (o.jumpMs === undefined) === (o.minuteAtS === undefined)) {
    throw new ValidationError(`${field}.jumpMs`, `expected exactly one of jumpMs (a step in ms) and minuteAtS (step to a minute beginning at that second of the run), got ${o.jumpMs === undefined ? 'neither' : 'both'}`);
  }
  if (o.fault === 'db-clock-jump' && typeof o.minuteAtS === 'number' && o.minuteAtS < (o.atS as number)) {
    throw new ValidationError(`${field}.minuteAtS`, `expected >= atS (${o.atS}): the minute is placed after the step, got ${o.minuteAtS}`);
  }
  if (o.fault === 'db-restart' && o.lullS !== undefined && o.mode !== 'crash') {
    throw new ValidationError(`${field}.lullS`, `applies to mode "crash" only, got mode ${show(o.mode ?? 'fast')}`);
  }
  if (spec.target && o.target === undefined && !UNTARGETED_BY_DEFAULT.has(o.fault as FaultName)) validateTarget(defaultTarget(o.fault as FaultName), ctx, `${field}.target`);
}

/** Faults whose target is optional and means nothing when absent (a database clock step moves no node clock unless told). */
const UNTARGETED_BY_DEFAULT = new Set<FaultName>(['db-clock-jump']);

/** Where a fault lands when the scenario names no target: a random worker for process faults, the first scheduler for clock faults. */
export function defaultTarget(fault: FaultName): NodeRef {
  return fault === 'worker-kill' || fault === 'worker-stop' || fault === 'worker-restart' || fault === 'clock-rate' || LINK_FAULTS.has(fault) ? 'worker:random' : 'scheduler:0';
}

function validateTarget(v: unknown, ctx: FaultContext, f2: string): void {
  const ref = typeof v === 'string' ? parseNodeRef(v) : undefined;
  if (!ref) throw new ValidationError(f2, `expected "worker:<i>", "scheduler:<i>", "<role>:random" or "<role>:all", got ${show(v)}`);
  const n = ref.role === 'worker' ? ctx.workers : ctx.schedulers;
  if (n === 0) throw new ValidationError(f2, `the scenario runs no ${ref.role} processes`);
  if (typeof ref.index === 'number' && ref.index >= n) throw new ValidationError(f2, `${ref.role} ${ref.index} does not exist; the scenario runs ${n} (0-${n - 1})`);
}
