import { redRecorders } from '../../engine/metrics/event-metrics.ts';
import { otelRedRecorders } from '../../engine/metrics/otel-metrics.ts';
import { workerStrategies } from '../../engine/worker/strategies.ts';
import { cronStrategies } from '../../engine/cron/strategies.ts';
import { Gauge } from 'prom-client';
import { createMetrics } from '../../engine/metrics/registry.ts';
import { editText, opsFileEdits, shippedOpsText } from '../prometheus/ops-files.ts';
import { INTERNAL_TABLES, QUERY_SOURCES, type GaugeRelabel, type Mutant, type QueryPatch } from './types.ts';

/** The harness's worker entry that runs a mutant (see worker-process.ts). */
export const MUTANT_WORKER_SCRIPT = 'harness/mutants/worker-process.ts';
/** The harness's scheduler entry that runs a mutant whose `runsIn` is 'scheduler'. */
export const MUTANT_SCHEDULER_SCRIPT = 'harness/mutants/scheduler-process.ts';
/** The harness's relay entry (bin/relay.ts with a mutant applied), for `runsIn: 'relay'`. */
export const MUTANT_RELAY_SCRIPT = 'harness/mutants/relay-process.ts';
/** The harness's archiver entry, for `runsIn: 'archiver'`. */
export const MUTANT_ARCHIVER_SCRIPT = 'harness/mutants/archiver-process.ts';
/** The harness's `stampede control` entry (bin/control.ts with a mutant applied), for `runsIn: 'control'`. */
export const MUTANT_CONTROL_SCRIPT = 'harness/mutants/control-process.ts';
/** The harness's `stampede dashboard` entry (bin/dashboard.ts with a mutant applied), for `runsIn: 'dashboard'`. */
export const MUTANT_DASHBOARD_SCRIPT = 'harness/mutants/dashboard-process.ts';

/**
 * The query text after a patch. Throws, naming the mutant, the query and the
 * text, when an edit's `find` is not present exactly once or the patch
 * changes nothing: production changed under the mutant, which must then be
 * rewritten rather than silently test the real engine.
 */
export function patchedQueryText(mutant: string, patch: QueryPatch): string {
  const source = QUERY_SOURCES[patch.file] as Record<string, string>;
  const original = source[patch.query];
  if (original === undefined) throw new Error(`mutant ${mutant}: ${patch.file} has no query "${patch.query}"`);
  return editText(mutant, `query ${patch.query} of ${patch.file}`, original, patch.edits);
}

let applied: string | null = null;

/**
 * Applies a mutant to this process: patches the loaded query records, swaps
 * internal strategies (the worker's and the cron materializer's) and RED recorders and sets the connection environment it names. Every change is checked before any is made, so
 * a patch that no longer applies leaves the engine untouched. Returns the
 * undo (tests run a mutant in-process, then restore the real engine). One
 * mutant at a time per process.
 */
export function applyMutant(name: string, mutant: Mutant): () => void {
  if (applied !== null) throw new Error(`mutant ${name}: mutant ${applied} is already applied in this process`);
  const targets = mutant.changes.map((c) =>
    c.kind === 'query'
      ? `${c.file} ${c.query}`
      : c.kind === 'strategy' || c.kind === 'cron-strategy'
        ? `${c.kind} ${c.strategy}`
        : c.kind === 'red-recorder' || c.kind === 'otel-recorder'
          ? `${c.kind} ${c.event}`
          : c.kind === 'table'
            ? `table ${c.table} ${String(c.entry)}`
            : c.kind === 'ops-file'
              ? `ops file ${c.file}`
              : c.kind === 'gauge-relabel'
                ? `gauge ${c.metric}`
                : c.kind === 'database'
                  ? `database ${c.replaces}`
                  : `env ${c.name}`,
  );
  const twice = targets.find((t, i) => targets.indexOf(t) !== i);
  if (twice) throw new Error(`mutant ${name}: changes ${twice} twice; put all its edits of one query in one patch`);
  const queries = mutant.changes
    .filter((c): c is QueryPatch => c.kind === 'query')
    .map((patch) => ({ source: QUERY_SOURCES[patch.file] as Record<string, string>, query: patch.query, text: patchedQueryText(name, patch) }));
  // Checked now, against the shipped files, though the runner makes the edits when it loads them.
  for (const c of mutant.changes) if (c.kind === 'ops-file') editText(name, c.file, shippedOpsText(c.file), c.edits);
  for (const c of mutant.changes) if (c.kind === 'gauge-relabel') gaugeExists(name, c);
  // A database patch is the runner's to apply, in the run's database (applyDatabasePatches): nothing in this process.
  const undo: (() => void)[] = [];
  for (const { source, query, text } of queries) {
    const original = source[query];
    source[query] = text;
    undo.push(() => (source[query] = original));
  }
  // The worker's and the cron materializer's internal strategy objects: the only seams a strategy swap reaches.
  const holders = { strategy: workerStrategies, 'cron-strategy': cronStrategies } as unknown as Record<string, Record<string, unknown>>;
  for (const change of mutant.changes) {
    if (change.kind !== 'strategy' && change.kind !== 'cron-strategy') continue;
    const holder = holders[change.kind];
    const original = holder[change.strategy];
    holder[change.strategy] = change.use;
    undo.push(() => (holder[change.strategy] = original));
  }
  // What an event records: for Prometheus (redRecorders) and through OpenTelemetry (otelRedRecorders).
  const tables = { 'red-recorder': redRecorders, 'otel-recorder': otelRedRecorders } as unknown as Record<string, Record<string, unknown>>;
  for (const change of mutant.changes) {
    if (change.kind !== 'red-recorder' && change.kind !== 'otel-recorder') continue;
    const recorders = tables[change.kind];
    const original = recorders[change.event];
    recorders[change.event] = change.use;
    undo.push(() => (recorders[change.event] = original));
  }
  // An internal table of checks or limits (INTERNAL_TABLES): one entry swapped.
  for (const change of mutant.changes) {
    if (change.kind !== 'table') continue;
    const table = INTERNAL_TABLES[change.table] as unknown as Record<string, unknown>;
    const entry = change.entry as string;
    if (!(entry in table)) throw new Error(`mutant ${name}: the internal table ${change.table} has no entry ${entry}; update harness/mutants/${name}.ts`);
    const original = table[entry];
    table[entry] = change.use;
    undo.push(() => (table[entry] = original));
  }
  for (const change of mutant.changes) {
    if (change.kind !== 'env') continue;
    const original = process.env[change.name];
    process.env[change.name] = change.value;
    undo.push(() => (original === undefined ? delete process.env[change.name] : (process.env[change.name] = original)));
  }
  for (const change of mutant.changes) {
    if (change.kind !== 'ops-file') continue;
    opsFileEdits[change.file] = { mutant: name, edits: change.edits };
    undo.push(() => delete opsFileEdits[change.file]);
  }
  const relabels = mutant.changes.filter((c): c is GaugeRelabel => c.kind === 'gauge-relabel');
  if (relabels.length) undo.push(relabelGauges(relabels));
  applied = name;
  return () => {
    for (const u of undo.reverse()) u();
    applied = null;
  };
}

/** Throws, naming the mutant, when the registry has no gauge of that name (production renamed it under the mutant). */
function gaugeExists(mutant: string, c: GaugeRelabel): void {
  const metric = createMetrics().registry.getSingleMetric(c.metric);
  if (!(metric instanceof Gauge)) throw new Error(`mutant ${mutant}: the registry (engine/metrics/registry.ts) has no gauge ${c.metric}; update harness/mutants/${mutant}.ts`);
}

/**
 * Wraps prom-client's Gauge#set, the one call through which the engine sets a
 * labelled gauge, so that series of the named metrics go under the mutant's
 * labels; returns the undo. The library's prototype is the seam: the engine's
 * own code stays as it ships.
 */
function relabelGauges(relabels: readonly GaugeRelabel[]): () => void {
  const proto = Gauge.prototype as unknown as { set: (this: Gauge, ...args: unknown[]) => void };
  const original = proto.set;
  const byMetric = new Map(relabels.map((r) => [r.metric, r.relabel]));
  proto.set = function (this: Gauge, ...args: unknown[]) {
    const relabel = byMetric.get((this as unknown as { name: string }).name);
    if (relabel && typeof args[0] === 'object' && args[0] !== null) return original.call(this, relabel(args[0] as Record<string, string | number>), args[1]);
    return original.apply(this, args);
  };
  return () => (proto.set = original);
}

/**
 * Runs a mutant's database patches in the run's freshly migrated database
 * (the runner calls it before any worker connects). Each replaced function
 * must exist before and have another body after, or this throws, naming the
 * mutant: a patch that no longer replaces anything would run the real engine
 * under the mutant's name.
 */
export async function applyDatabasePatches(name: string, mutant: Mutant, db: { query: (text: string, values?: unknown[]) => Promise<{ rows: Record<string, unknown>[] }> }): Promise<void> {
  for (const c of mutant.changes) {
    if (c.kind !== 'database') continue;
    const body = async () => (await db.query('SELECT p.prosrc FROM pg_proc p WHERE p.oid = to_regprocedure($1)', [c.replaces])).rows[0]?.prosrc;
    const before = await body();
    if (before === undefined) throw new Error(`mutant ${name}: the run's database has no function ${c.replaces}; update harness/mutants/${name}.ts`);
    await db.query(c.sql());
    if ((await body()) === before) throw new Error(`mutant ${name}: its SQL left ${c.replaces} as the migrations made it; update harness/mutants/${name}.ts`);
  }
}
