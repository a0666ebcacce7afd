import type { CheckerName } from '../checkers/index.ts';
import type { WorkerStrategies } from '../../engine/worker/strategies.ts';
import type { CronStrategies } from '../../engine/cron/strategies.ts';
import type { redRecorders } from '../../engine/metrics/event-metrics.ts';
import type { otelRedRecorders } from '../../engine/metrics/otel-metrics.ts';
import { materializerQueries } from '../../engine/cron/materializer.ts';
import { enqueueQueries } from '../../engine/enqueue.ts';
import { archiveQueries } from '../../engine/archive/job-archiver.ts';
import { controlQueries } from '../../engine/control/queries.ts';
import { postChecks } from '../../engine/dashboard/auth.ts';
import { queueMarks } from '../../engine/dashboard/pages/queues.ts';
import { dashboardAddress } from '../../engine/dashboard/server.ts';
import { payloadSize } from '../../engine/validate.ts';
import { statementShapes } from '../../engine/db.ts';
import { CONTROL_COMMANDS } from '../../bin/control-commands.ts';
import { outboxQueries } from '../../engine/effects/outbox.ts';
import { prunerQueries } from '../../engine/effects/pruner.ts';
import { queueStateQueries } from '../../engine/metrics/queue-state-sampler.ts';
import { samplerElectionQueries } from '../../engine/metrics/sampler-election.ts';
import { workerQueries, rescuerQueries } from '../../engine/worker/queries.ts';
import type { OpsFile, TextEdit } from '../prometheus/ops-files.ts';

/**
 * The loaded query records a mutant may patch, by the file they come from.
 * The engine reads each query from its record when it runs it, so a patched
 * record changes what the process runs from then on.
 */
export const QUERY_SOURCES = {
  'engine/worker/worker.sql': workerQueries,
  'engine/worker/rescuer.sql': rescuerQueries,
  'engine/enqueue.sql': enqueueQueries,
  'engine/cron/materializer.sql': materializerQueries,
  'engine/metrics/queue-state.sql': queueStateQueries,
  'engine/metrics/sampler-election.sql': samplerElectionQueries,
  'engine/effects/outbox.sql': outboxQueries,
  'engine/effects/pruner.sql': prunerQueries,
  'engine/archive/archive.sql': archiveQueries,
  'engine/control/control.sql': controlQueries,
} satisfies Record<string, Record<string, string>>;

export type QueryFile = keyof typeof QUERY_SOURCES;

/** One textual edit: `find` must occur exactly once in the query, and is replaced by `replace`. */
export type QueryEdit = TextEdit;

/** Edits of one named query of one .sql file. */
export interface QueryPatch {
  kind: 'query';
  file: QueryFile;
  query: string;
  edits: QueryEdit[];
}

/** One internal strategy of engine/worker/strategies.ts swapped for a broken one. */
export type StrategySwap = {
  [K in keyof WorkerStrategies]: { kind: 'strategy'; strategy: K; use: WorkerStrategies[K] };
}[keyof WorkerStrategies];

/** The cron materializer's decision (engine/cron/strategies.ts) swapped for a broken one, in a scheduler process. */
export type CronStrategySwap = {
  [K in keyof CronStrategies]: { kind: 'cron-strategy'; strategy: K; use: CronStrategies[K] };
}[keyof CronStrategies];

type RedRecorders = typeof redRecorders;
/** One entry of engine/metrics/event-metrics.ts's redRecorders (which series an event feeds) swapped for a broken one. */
export type RedRecorderSwap = {
  [E in keyof RedRecorders]: { kind: 'red-recorder'; event: E; use: RedRecorders[E] };
}[keyof RedRecorders];

/**
 * A libpq environment variable set in the process before the engine connects
 * (node-postgres reads PGOPTIONS and the rest for every connection it opens):
 * a deployment's misconfiguration, which no query or strategy of the engine shows.
 */
/**
 * The engine's internal tables of checks and limits, by name: each is read
 * where it is used, on every call, so a swapped entry changes what the
 * process does from then on. None is exported from the package.
 */
export const INTERNAL_TABLES = {
  /** engine/dashboard/auth.ts: what a POST from a session must show (its Origin, its CSRF token). */
  'dashboard-post-checks': postChecks,
  /** engine/dashboard/pages/queues.ts: what the queues page marks on a queue (over its SLO). */
  'dashboard-queue-marks': queueMarks,
  /** engine/dashboard/server.ts: where a dashboard listens when its options leave the port or the host out. */
  'dashboard-address': dashboardAddress,
  /** engine/validate.ts: how a serialized payload is measured against maxPayloadBytes. */
  'payload-size': payloadSize,
  /** engine/db.ts: how a Db sends a named statement (unnamed when built with preparedStatements: false). */
  'db-statement-shapes': statementShapes,
  /** bin/control-commands.ts: what each `stampede control` command runs. */
  'control-commands': CONTROL_COMMANDS,
};

type Tables = typeof INTERNAL_TABLES;
/** One entry of an internal table swapped for a broken one. */
export type TableSwap = {
  [T in keyof Tables]: { [K in keyof Tables[T]]: { kind: 'table'; table: T; entry: K; use: Tables[T][K] } }[keyof Tables[T]];
}[keyof Tables];

type OtelRedRecorders = typeof otelRedRecorders;
/** One entry of engine/metrics/otel-metrics.ts's otelRedRecorders (what an event records through OpenTelemetry) swapped for a broken one. */
export type OtelRecorderSwap = {
  [E in keyof OtelRedRecorders]: { kind: 'otel-recorder'; event: E; use: OtelRedRecorders[E] };
}[keyof OtelRedRecorders];

export interface EnvSetting {
  kind: 'env';
  name: `PG${string}`;
  value: string;
}

/**
 * Edits of a shipped operator file (ops/prometheus/alerts.yml, ops/grafana/stampede.json) as
 * the scenario runner loads it into its Prometheus: a rule or a panel written wrong. The file
 * on disk is not touched (`runsIn: 'runner'`).
 */
export interface OpsFilePatch {
  kind: 'ops-file';
  file: OpsFile;
  edits: TextEdit[];
}

/**
 * The labels one gauge is set under, rewritten where the engine hands them to
 * the metrics library (prom-client's Gauge#set): a gauge exported under the
 * wrong label while the figure the engine computed is right. Only series of
 * the metric named are touched.
 */
export interface GaugeRelabel {
  kind: 'gauge-relabel';
  metric: string;
  relabel: (labels: Record<string, string | number>) => Record<string, string | number>;
}

/**
 * A function of the schema replaced in the run's database, by SQL the runner
 * runs once the database is migrated, before any worker connects: for the
 * engine's logic that lives in a migration (stampede.fair_pick), which no
 * query patch reaches. `replaces` is the function's signature
 * (regprocedure); the runner refuses the run when it does not exist or its
 * body is the same after the SQL (production changed under the mutant).
 */
export interface DatabasePatch {
  kind: 'database';
  replaces: string;
  sql: () => string;
}

export type MutantChange = QueryPatch | StrategySwap | CronStrategySwap | RedRecorderSwap | OtelRecorderSwap | TableSwap | EnvSetting | OpsFilePatch | GaugeRelabel | DatabasePatch;

/** A deliberately broken engine: a negative control that one invariant must catch. */
export interface Mutant {
  /** What guarantee it breaks, in a sentence. */
  breaks: string;
  /**
   * The invariant that must come out false when the mutant runs on `scenario`.
   * null: no checker catches it yet (see `awaits`); the gate leaves it out,
   * and its only negative control so far is its engine test.
   */
  caughtBy: CheckerName | null;
  /** With `caughtBy: null`: the invariant (not yet written) that is to catch it. */
  awaits?: string;
  /** The built-in scenario that exercises what it breaks (the gate runs it there). */
  scenario: string;
  /** What it changes, applied at load time in the process that runs the engine. */
  changes: MutantChange[];
  /**
   * Which process runs the broken code: the worker processes (default), the
   * scheduler node processes (the cron materializer), or the scenario runner
   * itself (the engine's QueueStateSampler, which the runner samples with, and the control verbs its
   * operator faults and its dashboard issue; the `stampede control` processes of its `via: 'cli'` faults too),
   * the outbox relay processes (the relay and its pruner), the archiver process, only the
   * `stampede control` processes (a broken command of bin/control-commands.ts), or only the
   * `stampede dashboard` processes the harness starts (the dashboard-cli fault).
   */
  runsIn?: MutantProcess;
}

export type MutantProcess = 'worker' | 'scheduler' | 'runner' | 'relay' | 'archiver' | 'control' | 'dashboard';

/** A patch of one named query (typed: the query must exist in that file). */
export function queryPatch<F extends QueryFile>(file: F, query: keyof (typeof QUERY_SOURCES)[F] & string, edits: QueryEdit[]): QueryPatch {
  return { kind: 'query', file, query, edits };
}
