import { existsSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { importUserModule } from '../engine/load-module.ts';
import { validateSchedule, type ScheduleInput } from '../engine/cron/schedule.ts';
import { DEFAULTS } from '../engine/defaults.ts';
import { ValidationError } from '../engine/errors.ts';
import { checkOption } from '../engine/options/declare.ts';
import { refuseHeartbeatNotBelowLease, WORKER } from '../engine/worker/options.ts';
import { isMutantName, MUTANTS, type MutantName } from './mutants/index.ts';
import { CHECKERS, isCheckerName, resolveBounds, type BoundsOf, type CheckerName } from './checkers/index.ts';
import { planFaults, validateFaults, type FaultAction, type FaultSpec } from './faults/plan.ts';
import { validateLanes, validateMix } from './load/mix.ts';
import { arrivals } from './load/plan.ts';
import type { Arrival, Lane, LoadSpec, MixEntry, Tenants } from './load/types.ts';
import type { DownstreamConfig } from './runner/downstream.ts';
import { validateComponents, type ArchiverSettings, type RelaySettings } from './components.ts';
import { SeededRng, type Rng } from '../engine/rng.ts';

/**
 * A scenario is data: a plain object merged onto BASE_SCENARIO and validated.
 * The runner reads it; nothing here touches a process, a clock or a database.
 * See docs/scenario-format.md for the format with a commented example.
 */
export interface Scenario {
  /** Short name, as typed after `npm run scenario`. */
  name: string;
  /** What it reproduces: the real way job queues fail that it stands for. One line for `--list`, more below it. */
  description: string;
  /** Seeds the load plan, the fault timeline and the engine's jitter. `--seed` overrides it. */
  seed: number;
  /** How long load is offered, in seconds (the drain comes after). */
  durationS: number;
  /** Open-model arrivals: `constant` or `poisson`, at `rate` jobs/s whether or not the system keeps up. */
  load: LoadSpec;
  /** Worker processes. */
  workers: number;
  /** Jobs in flight at once in each worker process. */
  concurrency: number;
  /** Queues, the priority their jobs carry and their share of the load. */
  lanes: Lane[];
  /** Kinds of job and their shares (or exact counts), with handler parameters. */
  mix: MixEntry[];
  /** Engine options of every worker. */
  engine: EngineSettings;
  /** Per-worker overrides: entry i applies to worker i (a mutant on one worker, a slower poll on another). */
  engineByWorker: Partial<EngineSettings>[];
  /**
   * Scheduler (cron materializer) nodes, each with its own clock skew (and,
   * optionally, its own lookahead and catch-up window, as bin/scheduler.ts
   * takes them), and the schedules they materialize.
   */
  scheduler: { nodes: SchedulerNode[]; schedules: ScheduleInput[] };
  /**
   * Work in place before the load starts, as a real system carries it: delayed
   * jobs due later, and retries waiting out their backoff. A database clock step
   * (`db-clock-jump`) over their run_at makes them due at once.
   */
  preload: PreloadEntry[];
  /** The fault timeline; see harness/faults/spec.ts. */
  faults: FaultSpec[];
  /** The declared incident window, in seconds after the load starts; excused by the oldest-age SLO. */
  incident: { fromS: number; toS: number } | null;
  /** Invariants to check, by name: `true` for default bounds, an object of bounds, `false` to drop one the base turns on. */
  checkers: { [N in CheckerName]?: Partial<BoundsOf<N>> | boolean };
  /** Alert thresholds: the runner records when each signal crosses its threshold. */
  thresholds: { oldestAgeSloMs: number; deadLetterDepthAlert: number; xminAgeAlertMs: number };
  /**
   * The factor the run's Prometheus multiplies every `for:` of the alert rules by (the rules'
   * expressions, thresholds and labels are loaded as shipped): a scenario lasts seconds where an
   * incident lasts minutes. Default 1/60: a rule's minute is a second of the run.
   */
  alertForScale: number;
  /** After the load stops, how long the queue may take to drain before the run is inconclusive. */
  drainTimeoutS: number;
  /** Module whose exports are the handlers: relative to the working directory, or absolute; the default is the harness's own (`harness/handlers.ts`). */
  handlers: string;
  /** A dependency with a known capacity that `downstream` jobs call (harness/runner/downstream.ts); null: none. */
  downstream: DownstreamConfig | null;
  /** Global limits per queue (engine/control setQueueLimits), set before the load starts. */
  queueLimits: Record<string, { maxInFlight?: number; maxStartsPerSecond?: number; maxInFlightPerKey?: number; sequential?: boolean }>;
  /** Tenants of some lanes' queues: each of their arrivals carries a fairnessKey drawn by these shares; null: no keys. */
  tenants: Tenants | null;
  /**
   * Attempt budgets per queue (engine setQueueMaxAttempts), set before the load starts: the generator's jobs in these
   * queues give no maxAttempts of their own, so each takes its queue's; the others give `engine.maxAttempts`.
   */
  queueBudgets: Record<string, number>;
  /** Key weights in a fair queue's share (engine/control setKeyWeight, integer 1-1000), by queue then key, set before the load starts. */
  keyWeights: Record<string, Record<string, number>>;
  /**
   * How the runner sets `queueLimits` and `keyWeights`: through the engine's API ('api'), or at the command line
   * ('cli': `stampede control limit` and `key-weight`, each its own process, as an operator's shell sets them).
   */
  limitsVia: 'api' | 'cli';
  /** Outbox relay processes (with their pruner) delivering to the harness's sink; null: none (harness/components.ts). */
  relays: RelaySettings | null;
  /** An archiver process; null: none. */
  archiver: ArchiverSettings | null;
  /**
   * Every worker process started with `--sample-queue-state`: the workers elect
   * one queue-state sampler between them, as a deployment's do, and every round
   * the elected sampler writes is recorded (`sampler:round`). false: the workers
   * sample nothing (the runner's own sampler reads queue state for the checkers).
   */
  sampleQueueState: boolean;
  /**
   * Every process of a worker slot runs under the same worker id (`--worker-id worker-<slot>`), as under a
   * supervisor or a pod that passes a fixed id: a restarted process takes over its dead predecessor's id, and the
   * rescuer must still tell the two apart (docs/crash-accounting.md). false: each process its own id
   * (`worker-<slot>.<generation>`). The history names each process by the latter either way: the fleet
   * translates the id a process reports, and the holder a rescue names, to the process.
   */
  reuseWorkerIds: boolean;
  /**
   * The OpenTelemetry SDK in every worker: the producers enqueue each job with its own W3C traceparent
   * (recorded on `enqueue:ok`), and every worker process registers a tracer and a meter provider
   * (harness/otel-export.ts, harness code the handler module loads) whose spans and collections are recorded
   * as `otel:span` and `otel:metrics`. false: no SDK, no spans, no OTel metrics.
   */
  otel: boolean;
  /**
   * Settings of peer engines' adapters (docs/peers.md), for a scenario that shows one peer's own behaviour, a
   * known bug's control: jobs sent with an option the adapter does not use otherwise. A scenario with settings
   * runs only against the peers it names; null (the default): every engine, at the adapters' own settings.
   */
  peerSettings: PeerSettings | null;
}

/** Per peer engine: the settings its adapter applies to every job of the run. */
export interface PeerSettings {
  /** pg-boss: each job's `heartbeatSeconds` (>= 10, pg-boss's minimum) and `expireInSeconds`, at send. */
  'pg-boss'?: { heartbeatSeconds: number; expireInSeconds: number };
  /**
   * graphile-worker: its job id sequence starts at `jobIdsFrom` (set at migrate), as on a deployment that
   * has run billions of jobs: the ids past 2^31 that graphile-worker 0.17.2's failJobs cast to int[].
   */
  'graphile-worker'?: { jobIdsFrom: number };
}

/**
 * Preloaded work. `delayed`: count short jobs enqueued before the load, due at
 * seeded random instants between fromS and toS seconds after it starts
 * (reminders, scheduled sends). `retry`: count jobs, due at once, whose first
 * attempt fails; they wait out the engine's backoff (engine.backoffBaseMs) as
 * retries do. The run starts the load once every one of them has failed once.
 */
export type PreloadEntry =
  | { origin: 'delayed'; count: number; queue: string; dueInS: { fromS: number; toS: number } }
  | { origin: 'retry'; count: number; queue: string };

/** One scheduler node: its clock offset from the harness's, and optional materializer settings (default: derived from the skew). */
export interface SchedulerNode {
  skewMs: number;
  /** How far ahead of its clock the node materializes, ms. Default: its skew tolerance + tick + 10 s. */
  lookaheadMs?: number;
  /** How far back `all`/`latest` catch-up reaches, ms. Default: the engine's (one hour). */
  catchUpWindowMs?: number;
}

/**
 * The materializer options the fleet starts a scheduler node with (bin/scheduler.ts's flags; cron-facts judges by
 * the same): a fast tick, a skew tolerance well past the node's skew, and a lookahead past tick + tolerance, which
 * the materializer requires (a node behind by the tolerance must still write each row before it is due).
 */
export function schedulerNodeOptions(n: SchedulerNode): { tickMs: number; maxSkewMs: number; lookaheadMs: number; catchUpWindowMs: number | undefined } {
  const tickMs = 500;
  const maxSkewMs = Math.max(120_000, Math.abs(n.skewMs) * 2);
  return { tickMs, maxSkewMs, lookaheadMs: n.lookaheadMs ?? maxSkewMs + tickMs + 10_000, catchUpWindowMs: n.catchUpWindowMs };
}

/** The worker options a scenario sets (names as in engine/worker/options.ts), plus the attempt budget given at enqueue. */
export interface EngineSettings {
  leaseMs: number;
  /** 0 turns heartbeats off. */
  heartbeatMs: number;
  pollMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  /** Attempts before a job is dead-lettered; set on each job at enqueue. */
  maxAttempts: number;
  maxCrashes: number;
  /** Priority p overtakes q > p after waiting (q - p) * agingMs longer. */
  agingMs: number;
  rescueIntervalMs: number;
  /**
   * The worker runs a lease rescuer of its own (Worker.rescue; false: `--no-rescue`). Set false for some workers
   * with `engineByWorker`: the others' rescuers must take back what expires (at least one worker keeps its own).
   */
  rescue: boolean;
  /**
   * The worker's Db runs the hot statements as named prepared statements (DbOptions.preparedStatements; false:
   * `--no-prepared-statements`, for a pooler that drops them). Set false for some workers with `engineByWorker`.
   */
  preparedStatements: boolean;
  /** A handler running longer fails its attempt with JobTimeoutError (Worker.timeoutMs); null: no limit. */
  timeoutMs: number | null;
  /** A deliberately broken engine variant (a negative control); null for the real engine. */
  mutant: MutantName | null;
}

/** What a scenario file or a caller writes: any top-level field, and any part of the object-valued ones. Arrays are replaced whole. */
export type ScenarioInput = { [K in keyof Scenario]?: Scenario[K] extends unknown[] | null ? Scenario[K] : Scenario[K] extends object ? Partial<Scenario[K]> : Scenario[K] };

/** The no-op base every scenario is merged onto: steady, modest, no faults, the always-on invariants. */
export const BASE_SCENARIO: Scenario = deepFreeze({
  name: '',
  description: '',
  seed: 1,
  durationS: 30,
  load: { model: 'constant', rate: 500 },
  workers: 2,
  concurrency: DEFAULTS.concurrency,
  lanes: [{ queue: 'default', priority: 0, share: 1 }],
  mix: [{ kind: 'normal', share: 1, durationMs: { dist: 'lognormal', medianMs: 5, p99Ms: 50 } }],
  engine: {
    leaseMs: DEFAULTS.leaseMs,
    heartbeatMs: DEFAULTS.heartbeatMs,
    pollMs: DEFAULTS.pollMs,
    backoffBaseMs: DEFAULTS.backoffBaseMs,
    backoffCapMs: DEFAULTS.backoffCapMs,
    maxAttempts: DEFAULTS.maxAttempts,
    maxCrashes: DEFAULTS.maxCrashes,
    agingMs: DEFAULTS.agingMs,
    rescueIntervalMs: DEFAULTS.rescueIntervalMs,
    rescue: DEFAULTS.rescue,
    preparedStatements: true,
    timeoutMs: null,
    mutant: null,
  },
  engineByWorker: [],
  scheduler: { nodes: [], schedules: [] },
  preload: [],
  faults: [],
  incident: null,
  checkers: {
    'no-job-lost': true,
    'exactly-one-effect': true,
    'no-concurrent-claim': true,
    'no-stale-completion': true,
    'dead-letter-routing': true,
    'red-metrics': true,
    'queue-drained': true,
    'faults-exercised': true,
  },
  // xminAgeAlertMs: as ops/prometheus/alerts.yml's StampedeXminHorizonOld (10 minutes); a short scenario scales it down.
  thresholds: { oldestAgeSloMs: 5_000, deadLetterDepthAlert: 1, xminAgeAlertMs: 600_000 },
  alertForScale: 1 / 60,
  drainTimeoutS: 30,
  handlers: 'harness/handlers.ts',
  downstream: null,
  queueLimits: {},
  tenants: null,
  keyWeights: {},
  queueBudgets: {},
  limitsVia: 'api',
  relays: null,
  archiver: null,
  sampleQueueState: false,
  reuseWorkerIds: false,
  otel: false,
  peerSettings: null,
} satisfies Scenario);

const FIELDS = Object.keys(BASE_SCENARIO) as (keyof Scenario)[];
/** Object-valued fields merged key by key; every other field (arrays included) is replaced whole. */
const MERGED: ReadonlySet<string> = new Set(['load', 'engine', 'scheduler', 'checkers', 'thresholds']);

/** `partial` over `base`: object-valued fields merge one level deep, everything else replaces. Undefined leaves the base. */
export function mergeScenario(base: Scenario, partial: ScenarioInput): Scenario {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(partial)) {
    if (v === undefined) continue;
    const b = (base as unknown as Record<string, unknown>)[k];
    out[k] = MERGED.has(k) && isPlainObject(v) && isPlainObject(b) ? { ...b, ...v } : v;
  }
  return out as unknown as Scenario;
}

/**
 * A scenario from a partial: merged onto `base` (BASE_SCENARIO, or a
 * scenario to override, as `--seed` does), validated, and frozen. Throws
 * ValidationError naming the field, e.g.
 * `scenario.load.rate: expected a positive number, got "fast"`.
 */
export function defineScenario(partial: ScenarioInput, base: Scenario = BASE_SCENARIO): Scenario {
  if (!isPlainObject(partial)) throw new ValidationError('scenario', `expected an object, got ${show(partial)}`);
  for (const k of Object.keys(partial)) {
    if (!FIELDS.includes(k as keyof Scenario)) throw new ValidationError(`scenario.${k}`, `is not a scenario field; expected one of ${FIELDS.join(', ')}`);
  }
  for (const k of MERGED) {
    const v = (partial as Record<string, unknown>)[k];
    if (v !== undefined && !isPlainObject(v)) throw new ValidationError(`scenario.${k}`, `expected an object, got ${show(v)}`);
  }
  const s = mergeScenario(base, partial);
  validateScenario(s);
  // A copy, so freezing it leaves the caller's objects alone; validation has already refused what cannot be copied.
  return deepFreeze(structuredClone(s));
}

/** Checks every field of a whole scenario; throws ValidationError naming the first wrong one. */
export function validateScenario(s: Scenario): void {
  const f = (path: string) => `scenario.${path}`;
  if (typeof s.name !== 'string' || !/^[a-z0-9][a-z0-9._-]{0,63}$/i.test(s.name)) {
    throw new ValidationError(f('name'), `expected 1-64 of letters, digits, . _ - (starting with a letter or digit), got ${show(s.name)}`);
  }
  if (typeof s.description !== 'string' || s.description.trim() === '') throw new ValidationError(f('description'), 'expected a sentence saying which real failure this reproduces');
  int(s.seed, f('seed'), 0);
  positive(s.durationS, f('durationS'));
  if (s.load.model !== 'constant' && s.load.model !== 'poisson') throw new ValidationError(f('load.model'), `expected "constant" or "poisson", got ${show(s.load.model)}`);
  positive(s.load.rate, f('load.rate'));
  onlyKeys(s.load, ['model', 'rate'], f('load'));
  int(s.workers, f('workers'), 1);
  int(s.concurrency, f('concurrency'), 1);
  validateLanes(s.lanes, f('lanes'));
  validateMix(s.mix, s.lanes, f('mix'));
  validateEngine(s.engine, f('engine'), false);
  if (!Array.isArray(s.engineByWorker)) throw new ValidationError(f('engineByWorker'), `expected an array of per-worker overrides, got ${show(s.engineByWorker)}`);
  if (s.engineByWorker.length > s.workers) throw new ValidationError(f('engineByWorker'), `has ${s.engineByWorker.length} entries but the scenario runs ${s.workers} workers`);
  s.engineByWorker.forEach((o, i) => validateEngine(o, f(`engineByWorker[${i}]`), true));
  refuseNoRescuer(s, f);
  validateScheduler(s, f('scheduler'));
  validatePreload(s, f('preload'));
  validateFaults(s.faults, { workers: s.workers, schedulers: s.scheduler.nodes.length, durationS: s.durationS }, f('faults'));
  if (s.incident !== null) {
    if (!isPlainObject(s.incident)) throw new ValidationError(f('incident'), `expected null or { fromS, toS }, got ${show(s.incident)}`);
    nonNegative(s.incident.fromS, f('incident.fromS'));
    nonNegative(s.incident.toS, f('incident.toS'));
    if (s.incident.toS < s.incident.fromS) throw new ValidationError(f('incident.toS'), `expected >= fromS (${s.incident.fromS}), got ${s.incident.toS}`);
  }
  for (const [name, bounds] of Object.entries(s.checkers)) {
    if (!isCheckerName(name)) throw new ValidationError(f(`checkers.${name}`), `unknown checker; expected one of ${Object.keys(CHECKERS).join(', ')}`);
    if (bounds !== false) resolveBounds(name, bounds, f(`checkers.${name}`));
  }
  if (!Object.values(s.checkers).some((b) => b !== false)) throw new ValidationError(f('checkers'), 'expected at least one checker turned on; a run that checks nothing proves nothing');
  positive(s.thresholds.oldestAgeSloMs, f('thresholds.oldestAgeSloMs'));
  int(s.thresholds.deadLetterDepthAlert, f('thresholds.deadLetterDepthAlert'), 1);
  positive(s.thresholds.xminAgeAlertMs, f('thresholds.xminAgeAlertMs'));
  onlyKeys(s.thresholds, ['oldestAgeSloMs', 'deadLetterDepthAlert', 'xminAgeAlertMs'], f('thresholds'));
  positive(s.alertForScale, f('alertForScale'));
  if (s.alertForScale > 1) throw new ValidationError(f('alertForScale'), `expected at most 1 (a run compresses an incident's time, never stretches it), got ${show(s.alertForScale)}`);
  positive(s.drainTimeoutS, f('drainTimeoutS'));
  if (typeof s.handlers !== 'string' || s.handlers.trim() === '') throw new ValidationError(f('handlers'), `expected a module path, got ${show(s.handlers)}`);
  validateDownstream(s, f);
  validateComponents(s, f);
  if (typeof s.sampleQueueState !== 'boolean') throw new ValidationError(f('sampleQueueState'), `expected true or false, got ${show(s.sampleQueueState)}`);
  if (typeof s.reuseWorkerIds !== 'boolean') throw new ValidationError(f('reuseWorkerIds'), `expected true or false, got ${show(s.reuseWorkerIds)}`);
  if (typeof s.otel !== 'boolean') throw new ValidationError(f('otel'), `expected true or false, got ${show(s.otel)}`);
  validatePeerSettings(s.peerSettings, f('peerSettings'));
}

function validatePeerSettings(p: PeerSettings | null, field: string): void {
  if (p === null) return;
  const shape = "{ 'pg-boss': { heartbeatSeconds, expireInSeconds } } or { 'graphile-worker': { jobIdsFrom } }";
  if (!isPlainObject(p)) throw new ValidationError(field, `expected null or ${shape}, got ${show(p)}`);
  onlyKeys(p, ['pg-boss', 'graphile-worker'], field);
  const b = p['pg-boss'];
  if (b !== undefined) {
    const at = `${field}.pg-boss`;
    if (!isPlainObject(b)) throw new ValidationError(at, `expected { heartbeatSeconds, expireInSeconds }, got ${show(b)}`);
    onlyKeys(b, ['heartbeatSeconds', 'expireInSeconds'], at);
    int(b.heartbeatSeconds, `${at}.heartbeatSeconds`, 10);
    int(b.expireInSeconds, `${at}.expireInSeconds`, 1);
  }
  const g = p['graphile-worker'];
  if (g !== undefined) {
    const at = `${field}.graphile-worker`;
    if (!isPlainObject(g)) throw new ValidationError(at, `expected { jobIdsFrom }, got ${show(g)}`);
    onlyKeys(g, ['jobIdsFrom'], at);
    int(g.jobIdsFrom, `${at}.jobIdsFrom`, 1);
  }
}

function validateDownstream(s: Scenario, f: (path: string) => string): void {
  if (s.downstream !== null) {
    if (!isPlainObject(s.downstream)) throw new ValidationError(f('downstream'), `expected null or { capacity, callMs }, got ${show(s.downstream)}`);
    onlyKeys(s.downstream, ['capacity', 'callMs'], f('downstream'));
    int(s.downstream.capacity, f('downstream.capacity'), 1);
    positive(s.downstream.callMs, f('downstream.callMs'));
  } else if (s.mix.some((m) => m.kind === 'downstream')) {
    throw new ValidationError(f('downstream'), 'is null, but the mix has downstream jobs; expected { capacity, callMs }');
  }
  if (!isPlainObject(s.queueLimits)) throw new ValidationError(f('queueLimits'), `expected { queue: { maxInFlight?, maxStartsPerSecond? } }, got ${show(s.queueLimits)}`);
  const queues = s.lanes.map((l) => l.queue);
  for (const [queue, limits] of Object.entries(s.queueLimits)) {
    const at = f(`queueLimits.${queue}`);
    if (!queues.includes(queue)) throw new ValidationError(at, `is not a lane's queue; expected one of ${queues.join(', ')}`);
    if (!isPlainObject(limits)) throw new ValidationError(at, `expected { maxInFlight?, maxStartsPerSecond?, maxInFlightPerKey? }, got ${show(limits)}`);
    onlyKeys(limits, ['maxInFlight', 'maxStartsPerSecond', 'maxInFlightPerKey', 'sequential'], at);
    if (limits.sequential !== undefined && typeof limits.sequential !== 'boolean') throw new ValidationError(`${at}.sequential`, `expected true or false, got ${show(limits.sequential)}`);
    if (limits.maxInFlight !== undefined) int(limits.maxInFlight, `${at}.maxInFlight`, 1);
    if (limits.maxInFlightPerKey !== undefined) int(limits.maxInFlightPerKey, `${at}.maxInFlightPerKey`, 1);
    if (limits.maxStartsPerSecond !== undefined) positive(limits.maxStartsPerSecond, `${at}.maxStartsPerSecond`);
  }
  if (!isPlainObject(s.queueBudgets)) throw new ValidationError(f('queueBudgets'), `expected { queue: maxAttempts }, got ${show(s.queueBudgets)}`);
  for (const [queue, budget] of Object.entries(s.queueBudgets)) {
    const at = f(`queueBudgets.${queue}`);
    if (!queues.includes(queue)) throw new ValidationError(at, `is not a lane's queue; expected one of ${queues.join(', ')}`);
    int(budget, at, 1);
    if ((budget as number) > 1000) throw new ValidationError(at, `expected an integer from 1 to 1000, got ${show(budget)}`);
  }
  if (s.limitsVia !== 'api' && s.limitsVia !== 'cli') throw new ValidationError(f('limitsVia'), `expected 'api' or 'cli', got ${show(s.limitsVia)}`);
  if (!isPlainObject(s.keyWeights)) throw new ValidationError(f('keyWeights'), `expected { queue: { key: weight } }, got ${show(s.keyWeights)}`);
  for (const [queue, weights] of Object.entries(s.keyWeights)) {
    const at = f(`keyWeights.${queue}`);
    if (!queues.includes(queue)) throw new ValidationError(at, `is not a lane's queue; expected one of ${queues.join(', ')}`);
    if (!isPlainObject(weights) || Object.keys(weights).length === 0) throw new ValidationError(at, `expected a non-empty { key: weight }, got ${show(weights)}`);
    for (const [key, weight] of Object.entries(weights)) {
      int(weight, `${at}.${key}`, 1);
      if ((weight as number) > 1000) throw new ValidationError(`${at}.${key}`, `expected an integer from 1 to 1000, got ${show(weight)}`);
    }
  }
  if (s.tenants !== null) {
    const at = f('tenants');
    if (!isPlainObject(s.tenants)) throw new ValidationError(at, `expected null or { queues, keys: { key: share } }, got ${show(s.tenants)}`);
    onlyKeys(s.tenants, ['queues', 'keys'], at);
    const tenantQueues: unknown = s.tenants.queues;
    if (!Array.isArray(tenantQueues) || tenantQueues.length === 0) throw new ValidationError(`${at}.queues`, `expected a non-empty array of lanes' queues, got ${show(tenantQueues)}`);
    tenantQueues.forEach((q, i) => {
      if (!queues.includes(q)) throw new ValidationError(`${at}.queues[${i}]`, `expected a lane's queue (${queues.join(', ')}), got ${show(q)}`);
    });
    const keys = s.tenants.keys;
    if (!isPlainObject(keys) || Object.keys(keys).length === 0) throw new ValidationError(`${at}.keys`, `expected a non-empty { key: share }, got ${show(keys)}`);
    for (const [key, share] of Object.entries(keys)) positive(share, `${at}.keys.${key}`);
  }
}

const ENGINE_KEYS = Object.keys(BASE_SCENARIO.engine) as (keyof EngineSettings)[];
const WORKER_SETTINGS = ENGINE_KEYS.filter((k): k is keyof EngineSettings & keyof typeof WORKER.options => Object.hasOwn(WORKER.options, k));

function validateEngine(e: Partial<EngineSettings>, field: string, partial: boolean): void {
  if (!isPlainObject(e)) throw new ValidationError(field, `expected an object of engine options, got ${show(e)}`);
  onlyKeys(e, ENGINE_KEYS, field);
  // The worker's own options are judged by the worker's declaration and its heartbeat rule, not restated here.
  for (const k of WORKER_SETTINGS) {
    const v = e[k];
    if (v === undefined ? !partial : v !== null) checkOption(WORKER.options[k], v, `${field}.${k}`);
  }
  if (!partial || e.maxAttempts !== undefined) int(e.maxAttempts, `${field}.maxAttempts`, 1);
  if ((!partial || e.preparedStatements !== undefined) && typeof e.preparedStatements !== 'boolean') {
    throw new ValidationError(`${field}.preparedStatements`, `expected true or false, got ${show(e.preparedStatements)}`);
  }
  if (e.heartbeatMs && e.leaseMs) refuseHeartbeatNotBelowLease(`${field}.heartbeatMs`, e.heartbeatMs, e.leaseMs);
  if (e.mutant !== undefined && e.mutant !== null && !isMutantName(e.mutant)) {
    throw new ValidationError(`${field}.mutant`, `expected null or one of ${Object.keys(MUTANTS).join(', ')}, got ${show(e.mutant)}`);
  }
}

/**
 * A run in which no worker runs a rescuer would leave every expired lease held until the drain gives up: the
 * harness starts no rescuer of its own, so at least one worker must keep its (Worker.rescue: "another process must").
 */
function refuseNoRescuer(s: Scenario, f: (path: string) => string): void {
  const slots = Array.from({ length: s.workers }, (_, i) => engineSettingsFor(s, i).rescue);
  if (slots.some((r) => r)) return;
  const field = s.engine.rescue ? f('engineByWorker') : f('engine.rescue');
  throw new ValidationError(field, `leaves all ${s.workers} workers without a lease rescuer, so nothing would take back an expired lease; expected at least one worker with rescue: true`);
}

function validateScheduler(s: Scenario, field: string): void {
  const sch = s.scheduler;
  onlyKeys(sch, ['nodes', 'schedules'], field);
  if (!Array.isArray(sch.nodes)) throw new ValidationError(`${field}.nodes`, `expected an array of { skewMs }, got ${show(sch.nodes)}`);
  sch.nodes.forEach((n, i) => {
    if (!isPlainObject(n)) throw new ValidationError(`${field}.nodes[${i}]`, `expected { skewMs }, got ${show(n)}`);
    onlyKeys(n, ['skewMs', 'lookaheadMs', 'catchUpWindowMs'], `${field}.nodes[${i}]`);
    if (typeof n.skewMs !== 'number' || !Number.isFinite(n.skewMs)) throw new ValidationError(`${field}.nodes[${i}].skewMs`, `expected a number of ms (negative: behind), got ${show(n.skewMs)}`);
    if (n.lookaheadMs !== undefined) positive(n.lookaheadMs, `${field}.nodes[${i}].lookaheadMs`);
    if (n.catchUpWindowMs !== undefined) nonNegative(n.catchUpWindowMs, `${field}.nodes[${i}].catchUpWindowMs`);
  });
  if (!Array.isArray(sch.schedules)) throw new ValidationError(`${field}.schedules`, `expected an array of schedules, got ${show(sch.schedules)}`);
  if (sch.schedules.length > 0 && sch.nodes.length === 0) throw new ValidationError(`${field}.nodes`, 'expected at least one scheduler node to materialize the schedules');
  const ids = new Set<string>();
  sch.schedules.forEach((sc, i) => {
    const at = `${field}.schedules[${i}]`;
    try {
      validateSchedule(sc);
    } catch (err) {
      // The cron module names fields relative to the schedule; say where in the scenario.
      if (err instanceof ValidationError) throw new ValidationError(`${at}.${err.field}`, err.message.slice(err.field.length + 2));
      throw err;
    }
    if (ids.has(sc.id)) throw new ValidationError(`${at}.id`, `"${sc.id}" appears twice`);
    ids.add(sc.id);
  });
}

function validatePreload(s: Scenario, field: string): void {
  if (!Array.isArray(s.preload)) throw new ValidationError(field, `expected an array of { origin, count, queue, ... }, got ${show(s.preload)}`);
  const queues = s.lanes.map((l) => l.queue);
  s.preload.forEach((p, i) => {
    const at = `${field}[${i}]`;
    if (!isPlainObject(p)) throw new ValidationError(at, `expected { origin, count, queue, ... }, got ${show(p)}`);
    const origin: unknown = p.origin;
    if (origin !== 'delayed' && origin !== 'retry') throw new ValidationError(`${at}.origin`, `expected "delayed" or "retry", got ${show(origin)}`);
    onlyKeys(p, p.origin === 'delayed' ? ['origin', 'count', 'queue', 'dueInS'] : ['origin', 'count', 'queue'], at);
    int(p.count, `${at}.count`, 1);
    if (!queues.includes(p.queue)) throw new ValidationError(`${at}.queue`, `expected one of the scenario's lanes (${queues.join(', ')}), got ${show(p.queue)}`);
    if (p.origin === 'delayed') {
      if (!isPlainObject(p.dueInS)) throw new ValidationError(`${at}.dueInS`, `expected { fromS, toS }, got ${show(p.dueInS)}`);
      positive(p.dueInS.fromS, `${at}.dueInS.fromS`);
      positive(p.dueInS.toS, `${at}.dueInS.toS`);
      if (p.dueInS.toS < p.dueInS.fromS) throw new ValidationError(`${at}.dueInS.toS`, `expected >= fromS (${p.dueInS.fromS}), got ${p.dueInS.toS}`);
    }
  });
}

/**
 * The settings a worker process is given by its Worker option flags (optionArgv(WORKER, ...) turns them into
 * arguments): all but the attempt budget (given to each job at enqueue), the mutant (it picks the script) and
 * preparedStatements (its Db's, `--no-prepared-statements`: the fleet adds it).
 * (rescueIntervalMs had no flag until the declarations showed it was dropped: scenarios now rescue at the period they set.)
 */
export function workerFlagSettings(e: EngineSettings): Omit<EngineSettings, 'maxAttempts' | 'mutant' | 'preparedStatements'> {
  const { maxAttempts: _atEnqueue, mutant: _script, preparedStatements: _db, ...flagged } = e;
  return flagged;
}

/** The engine options of worker `index`: the scenario's, with that worker's overrides. */
export function engineSettingsFor(s: Scenario, index: number): EngineSettings {
  return { ...s.engine, ...(s.engineByWorker[index] ?? {}) };
}

/**
 * Everything a run will do that the seed decides, from the one place that
 * forks it: the load plan (lazy: iterate it as the run goes) and the fault
 * actions. Same scenario, same seed: the same workload and the same faults.
 */
export function planScenario(s: Scenario, rng: Rng = new SeededRng(s.seed)): { arrivals: Iterable<Arrival>; faults: FaultAction[] } {
  return {
    arrivals: arrivals(s, rng.fork('load')),
    faults: planFaults(s.faults, { workers: s.workers, schedulers: s.scheduler.nodes.length, durationS: s.durationS }, rng.fork('faults'), 'scenario.faults'),
  };
}

/** The checkers a scenario turns on, in registry order. */
export function enabledCheckers(s: Scenario): CheckerName[] {
  return (Object.keys(CHECKERS) as CheckerName[]).filter((n) => s.checkers[n] !== undefined && s.checkers[n] !== false);
}

const SCENARIO_MODULE = /^\.[cm]?[jt]s$/;

/**
 * Loads a user's own scenario file (`.ts` or `.js`): its default export must
 * be a scenario, from defineScenario() or a plain object, which is merged and
 * validated here. Refuses a missing file, a missing default export and any
 * wrong field, naming it.
 */
export async function loadScenarioFile(path: string): Promise<Scenario> {
  const abs = resolve(path);
  if (!existsSync(abs)) throw new ValidationError('scenario file', `${path} does not exist`);
  // A .json (or .yaml) scenario would reach Node's loader and come back as its own message about import attributes.
  if (!SCENARIO_MODULE.test(extname(abs))) {
    throw new ValidationError('scenario file', `${path} is not a module; expected a .js, .mjs, .cjs or .ts file whose default export is a scenario`);
  }
  let mod: { default?: unknown };
  try {
    mod = await importUserModule(abs);
  } catch (err) {
    throw new ValidationError('scenario file', `${path} could not be loaded: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (mod.default === undefined) throw new ValidationError(`${path}: default export`, 'is missing; expected `export default defineScenario({ ... })` or a plain scenario object');
  if (!isPlainObject(mod.default)) throw new ValidationError(`${path}: default export`, `expected a scenario object, got ${show(mod.default)}`);
  return defineScenario(mod.default as ScenarioInput);
}

function isPlainObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function show(v: unknown): string {
  if (typeof v === 'string') return `"${v}"`;
  if (typeof v === 'function') return 'a function';
  return JSON.stringify(v) ?? String(v);
}

function positive(v: unknown, field: string): void {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new ValidationError(field, `expected a positive number, got ${show(v)}`);
}

function nonNegative(v: unknown, field: string): void {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new ValidationError(field, `expected a number >= 0, got ${show(v)}`);
}

function int(v: unknown, field: string, min: number): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) throw new ValidationError(field, `expected an integer >= ${min}, got ${show(v)}`);
}

function onlyKeys(o: object, keys: readonly string[], field: string): void {
  for (const k of Object.keys(o)) if (!keys.includes(k)) throw new ValidationError(`${field}.${k}`, `is not a field of ${field.replace(/^scenario\./, '')}; expected one of ${keys.join(', ')}`);
}

function deepFreeze<T>(o: T): T {
  if (typeof o === 'object' && o !== null && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

