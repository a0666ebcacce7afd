import type pg from 'pg';
/**
 * The pluggable "system under test": everything the bench needs from a job
 * queue, so stampede and its peers run the same workloads the same way.
 * A family is one library; a config is one way of running it (defaults,
 * batched settings, with or without LISTEN/NOTIFY).
 */

/** The payload every bench job carries: `t` is the wall-clock instant (epoch ms, fractional) it became due. */
export interface BenchJob {
  /** When the job was due (bench/proc.ts wallMs); 0 in a drain, where no latency is taken. */
  t: number;
  /** Offered in the latency run's warm-up: its due-to-start is kept apart from the measured window's. */
  warmup?: true;
}

export interface Producer {
  /** One job, one INSERT, committed when this resolves. */
  enqueueOne(job: BenchJob): Promise<void>;
  /** Many jobs in the library's own bulk call. */
  enqueueBatch(jobs: BenchJob[]): Promise<void>;
  close(): Promise<void>;
}

export interface WorkerHandle {
  /** Begins claiming and running jobs. */
  start(): Promise<void>;
  /** Stops claiming and waits for in-flight work and pending completions. */
  stop(): Promise<void>;
}

export type FamilyName = 'stampede' | 'graphile-worker' | 'pg-boss';

export interface SystemFamily {
  name: FamilyName;
  /** The installed package version, read from its package.json. */
  version(): string;
  /** Installs the library's schema into an empty database. */
  install(url: string, settings: Record<string, unknown>): Promise<void>;
  /** A producer with `poolSize` connections. */
  producer(url: string, settings: Record<string, unknown>, poolSize: number): Promise<Producer>;
  /**
   * A worker ready to start: connections warmed, nothing claimed yet, so the
   * drain clock measures claiming and running, not library start-up.
   * `onJob` is called at the start of every job's handler.
   */
  worker(url: string, settings: Record<string, unknown>, onJob: (job: BenchJob) => void): Promise<WorkerHandle>;
  /**
   * Jobs not yet finished, as the database sees them (completions committed), read on `client`: one connection the
   * drain opens before its clock starts, so polling the end pays no connection set-up.
   */
  remaining(client: pg.ClientBase): Promise<number>;
  /**
   * The table its jobs live in while queued, the one a held xmin horizon bloats (qualified name; a partitioned
   * parent stands for its partitions): the horizon workload's dead tuples and sizes are this table's.
   */
  hotTable: string;
}

export interface SystemConfig {
  /** Stable id used on the command line, in the JSON and as the table row. */
  id: string;
  family: FamilyName;
  /** What this config is, in a few words, for the table. */
  label: string;
  settings: Record<string, unknown>;
  /** Whether this config wakes on LISTEN/NOTIFY (the latency workload needs to know what it compares). */
  notify: boolean;
  /**
   * Jobs one worker process runs at once: what "equal concurrency" compares
   * (a pg-boss batch handler holds its whole batch at once).
   */
  concurrency: number;
}

/** The queue (task name) every bench job goes to. */
export const BENCH_QUEUE = 'bench';
