import type { Db } from '../../engine/db.ts';
import type { FinalState } from '../history.ts';
import type { Scenario } from '../scenario.ts';

/** The engines the harness can judge. */
export const ENGINE_NAMES = ['stampede', 'graphile-worker', 'pg-boss'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

export function isEngineName(name: string): name is EngineName {
  return (ENGINE_NAMES as readonly string[]).includes(name);
}

/**
 * What an engine promises, each from its own documentation (`source`): a
 * checker whose property rests on a promise the engine does not make reports
 * "not promised" for it, never pass or fail (promises.ts maps checkers to these).
 */
export interface EnginePromises {
  /** An acknowledged enqueue is never lost: it ends done or permanently failed. */
  durableEnqueue: boolean;
  /** A claim is time-bounded (a lease or an expiry) and a crashed worker's job runs again within the run's drain. */
  crashRecovery: boolean;
  /** A running job's claim is extended while it runs (a heartbeat), so a slow job is not taken over. */
  heartbeats: boolean;
  /** A worker stopped gracefully hands back the jobs it still runs when its grace runs out, so they run again within the run. */
  releaseOnStop: boolean;
  /** One holder at a time: a job is never run by two workers at once while its claim stands. */
  exclusiveClaim: boolean;
  /** A holder whose claim was taken over can no longer write (completion, effect): fencing. */
  fencing: boolean;
  /** A handler's side effect written through the engine commits at most once per job. */
  effectOnce: boolean;
  /** Jobs that exhaust their attempts (or crash-loop) are moved to a dead-letter place with their reason. */
  deadLetters: boolean;
  /** A job that kills its worker every time is recognised as such before its attempt budget. */
  crashLoopVerdict: boolean;
  /** Higher-priority due jobs are claimed before lower ones. */
  priorities: boolean;
  /** A delayed job does not start before its run_at. */
  delayedJobs: boolean;
  /** Cron schedules, with one job per occurrence (a key per occurrence). */
  cronOccurrenceKeys: boolean;
  /** The engine's own metrics, sampler, alert rules and dashboard, as stampede ships them. */
  stampedeObservability: boolean;
  /** Where each promise (or its absence) is documented, in a few words and a link. */
  source: Partial<Record<Exclude<keyof EnginePromises, 'source'>, string>>;
}

export type PromiseName = Exclude<keyof EnginePromises, 'source'>;

/** One job as the harness asks an engine to enqueue it, whatever the engine's API. */
export interface JobSpec {
  queue: string;
  /** The harness's payload: `kind`, `op`, `params` (harness/handlers.ts). */
  payload: Record<string, unknown>;
  /** The harness's key of the job (`op:<n>`, `fault:<seq>:<i>`): its dedup key where the engine has one. */
  key: string;
  /** 0 (lowest) to 9 (highest), the harness's scale; each adapter maps it to its engine's. */
  priority: number;
  maxAttempts: number;
  /** Due this long after now() (a delayed job). */
  delayMs?: number;
  /** Due at this instant (database clock). */
  runAt?: Date;
}

/** What an enqueue answered: the id the history uses for the job, and when it is due (database clock, epoch ms). */
export interface Enqueued {
  jobId: number;
  runAtMs: number;
}

/** The worker process of one slot: the harness's worker entry for this engine, its flags and environment. */
export interface WorkerProcessSpec {
  script: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * A job queue as the harness runs and judges it: its schema, its enqueue (one,
 * a batch; with a key, a delay, a priority), its workers as real node
 * processes running the harness's handler and reporting the history's events
 * (claimed, started, completed, failed, effect), and its final state for the
 * checkers; plus what it promises. stampede's adapter runs through the
 * harness's own runner (harness/runner/run.ts), unchanged; the peers' through
 * peer-run.ts.
 */
export interface EngineAdapter {
  name: EngineName;
  /** The installed package's version (the exact one package.json pins). */
  version(): string;
  promises: EnginePromises;
  /** Why this scenario cannot run against this engine (a fault or feature it has no counterpart of), or null. */
  inapplicable(s: Scenario): string | null;
}

/** A peer engine's harness side: everything the peer runner does through it. */
export interface PeerAdapter extends EngineAdapter {
  /** Installs the engine's schema and creates the scenario's queues in an empty database. */
  migrate(url: string, s: Scenario): Promise<void>;
  /** A producer over `db` (the harness's pool): enqueue one job or a batch, with the scenario's settings for this peer (`peerSettings`). */
  producer(url: string, db: Db, s: Scenario): Promise<PeerProducer>;
  /** The worker process of a slot (generation `gen` counts its restarts). */
  workerProcess(s: Scenario, slot: number, gen: number): WorkerProcessSpec;
  /** Jobs not finished yet (not done, not permanently failed), and the database's now(). */
  unfinished(db: Db): Promise<{ n: number; dbNow: Date }>;
  /** Per queue: jobs due and not started, and the age of the oldest, ms (the oldest-age figures). */
  sample(db: Db): Promise<{ depthByQueue: Record<string, number>; oldestUnclaimedAgeMs: Record<string, number> }>;
  readFinalState(db: Db): Promise<FinalState>;
}

export interface PeerProducer {
  enqueue(job: JobSpec): Promise<Enqueued>;
  enqueueBatch(jobs: JobSpec[]): Promise<Enqueued[]>;
  close(): Promise<void>;
}
