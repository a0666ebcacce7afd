// The mutant registry (harness/mutants/): every query patch still applies to
// the query production runs, really changes it, and still prepares in
// Postgres; every strategy swap (the worker's and the cron materializer's), RED recorder swap, connection setting,
// ops-file edit and gauge relabel really changes behaviour; applying and undoing
// restores the real engine exactly; a patch whose text production no longer
// has fails loudly.
import { describe, expect, it } from 'vitest';
import { Db } from '../engine/db.ts';
import { enqueue } from '../engine/enqueue.ts';
import { SeededRng } from '../engine/rng.ts';
import { claimJobs } from '../engine/worker/claim.ts';
import { createMetrics } from '../engine/metrics/index.ts';
import { redRecorders } from '../engine/metrics/event-metrics.ts';
import { otelRedRecorders, type OtelRed } from '../engine/metrics/otel-metrics.ts';
import { workerStrategies, type WorkerStrategies } from '../engine/worker/strategies.ts';
import { cronStrategies, type CronStrategies } from '../engine/cron/strategies.ts';
import { parseCron } from '../engine/cron/expression.ts';
import type { Clock } from '../engine/clock.ts';
import { applyDatabasePatches, patchedQueryText } from '../harness/mutants/apply.ts';
import { applyMutant, MUTANTS, type MutantName } from '../harness/mutants/index.ts';
import { INTERNAL_TABLES, QUERY_SOURCES, type QueryPatch } from '../harness/mutants/types.ts';
import { loadOpsFile, OPS_FILES, shippedOpsText } from '../harness/prometheus/ops-files.ts';
import { SCENARIOS } from '../scenarios/index.ts';
import { freshDatabase } from './support/db.ts';
import { jobRow } from './support/jobs.ts';
import { CONTROL_COMMANDS, type ControlCommandDef } from '../bin/control-commands.ts';
import { deadLetterJob, listKeyWeights } from '../engine/control/index.ts';

const { db, url } = await freshDatabase();
const entries = Object.entries(MUTANTS) as [MutantName, (typeof MUTANTS)[MutantName]][];
type Tables = typeof INTERNAL_TABLES;
/** Per entry of an internal table, one call that the real entry answers with a refusal (a request it must turn away). */
const TABLE_PROBES: { [T in keyof Tables]: { [K in keyof Tables[T]]: (entry: Tables[T][K]) => unknown } } = {
  'dashboard-post-checks': {
    origin: (check) => check({ headers: { host: '127.0.0.1:7676', origin: 'https://intruder.example' } } as never, []),
    csrf: (check) => check(new URLSearchParams({ _csrf: 'another-session-token' }), { id: 's', csrf: 'this-session-token', operator: '', flash: null }),
  },
  // A queue 90 s old and one 3 s old against a 60 s objective: which the page marks over.
  'dashboard-queue-marks': { overSlo: (mark) => [mark(90_000, 60_000), mark(3_000, 60_000)] },
  // Where a dashboard given nothing listens, and one given a port and a host.
  'dashboard-address': { of: (address) => [address({}), address({ port: 0, host: '::1' })] },
  'payload-size': { bytesOf: (measure) => measure('"é"') },
  // A named statement on a Db built without prepared statements: the name it goes with, if any.
  'db-statement-shapes': { onDb: (shape) => shape({ name: 'stampede_probe', text: 'SELECT 1', values: [] }, { connectionString: '', preparedStatements: false }).name ?? 'unnamed' },
  // Each command run on a fresh pending job (its id the argument, its queue --queue): the job's state after, or the refusal.
  // key-weight on a fresh queue (weight 7 for key k): the weights the queue has after it. retry also on a typo'd id.
  'control-commands': { ...Object.fromEntries(Object.keys(CONTROL_COMMANDS).map((name) => [name, controlProbe])), 'key-weight': keyWeightProbe, retry: retryProbe } as never,
};

/** `retry <id>x` (a stray key) on a fresh dead job: what became of it, or why it refused (the id left out: it differs per call). */
async function retryProbe(command: ControlCommandDef): Promise<string> {
  const queue = `probe-${Math.floor(Math.random() * 1e9)}`;
  const { id } = await enqueue(db, queue, {});
  await deadLetterJob(db, id, { by: 'probe', reason: 'mutant probe' });
  try {
    await command.run(db, [`${id}x`], { queue }, () => ({ by: 'probe', reason: 'mutant probe' }));
  } catch (err) {
    return `refused: ${(err as Error).message.replaceAll(String(id), '<id>')}`;
  }
  return (await jobRow(db, id)).state;
}

/** `key-weight <fresh queue> k 7`: the queue's key weights after it, or why it refused. */
async function keyWeightProbe(command: ControlCommandDef): Promise<unknown> {
  const queue = `probe-${Math.floor(Math.random() * 1e9)}`;
  try {
    await command.run(db, [queue, 'k', '7'], { new: true }, () => ({ by: 'probe', reason: 'mutant probe' }));
  } catch (err) {
    return `refused: ${(err as Error).message}`;
  }
  return (await listKeyWeights(db, queue)).map((w) => [w.key, w.weight]);
}

/** A `stampede control` command's run, on a fresh pending job: what became of the job, or why it refused. */
async function controlProbe(command: ControlCommandDef): Promise<string> {
  const queue = `probe-${Math.floor(Math.random() * 1e9)}`;
  const { id } = await enqueue(db, queue, {});
  try {
    await command.run(db, [String(id)], { queue }, () => ({ by: 'probe', reason: 'mutant probe' }));
  } catch (err) {
    return `refused: ${(err as Error).message}`;
  }
  return (await jobRow(db, id)).state;
}

const patches = entries.flatMap(([name, m]) => m.changes.filter((c): c is QueryPatch => c.kind === 'query').map((p) => [name, p] as const));

/** What a strategy does, observably, so the real one and a mutant's can be told apart. */
const PROBES: Record<keyof WorkerStrategies, (use: any) => Promise<unknown>> = {
  retryDelayMs: async (use: WorkerStrategies['retryDelayMs']) => {
    const rng = new SeededRng(3);
    return Array.from({ length: 20 }, () => use(4, { baseMs: 1_000, capMs: 60_000 }, rng));
  },
  effectOnce: async (use: WorkerStrategies['effectOnce']) => {
    const queue = `probe-${Math.floor(Math.random() * 1e9)}`;
    await enqueue(db, queue, {});
    const [job] = await claimJobs(db, { queues: [queue], leaseMs: [60_000], limit: 1, workerId: 'probe', agingMs: 5_000 });
    // What the effect sees: whether its statements run inside the transaction that holds the job's key.
    const inKeysTransaction = async (tx: { query: (sql: string) => Promise<{ rows: { in_tx: boolean }[] }> }) =>
      (await tx.query('SELECT pg_current_xact_id_if_assigned() IS NOT NULL AS in_tx')).rows[0].in_tx ? 'ran beside the key' : 'ran alone';
    const outcome = await use(db, job, `probe:${queue}`, inKeysTransaction);
    return { ...outcome, state: (await jobRow(db, job.id)).state };
  },
  handlerTimeout: async (use: WorkerStrategies['handlerTimeout']) => {
    // A clock on which any wait is over at once: does the limit fire before the handler settles?
    const timeUp = { now: () => 0, sleep: async () => {} } as unknown as Clock;
    const disarm = new AbortController();
    const outcome = await Promise.race([
      use(timeUp, 1_000, disarm.signal).then(() => 'fired', () => 'disarmed'),
      new Promise((resolve) => setImmediate(() => resolve('still waiting'))),
    ]);
    disarm.abort(new Error('handler settled'));
    return outcome;
  },
  claimedAheadAtStop: async (use: WorkerStrategies['claimedAheadAtStop']) => use(['a', 'b']),
  leaseRenewedFrom: async (use: WorkerStrategies['leaseRenewedFrom']) => use,
  // A refusal with its SQLSTATE, and a connection the driver lost (no SQLSTATE: a failover's kill).
  databaseFault: async (use: WorkerStrategies['databaseFault']) => [
    use(Object.assign(new Error('cannot execute UPDATE in a read-only transaction'), { code: '25006' })),
    use(new Error('Connection terminated unexpectedly')),
  ],
  // Sent at 1 s, answered at 1.7 s: counted from the send, or not.
  leaseMayEndAt: async (use: WorkerStrategies['leaseMayEndAt']) => [use(1_000, 5_000, 1_700)],
  releaseExpired: async (use: WorkerStrategies['releaseExpired']) => {
    const queue = `probe-${Math.floor(Math.random() * 1e9)}`;
    await enqueue(db, queue, {});
    const [job] = await claimJobs(db, { queues: [queue], leaseMs: [60_000], limit: 1, workerId: 'probe', agingMs: 5_000 });
    await use(db, job.id, job.leaseToken);
    return (await jobRow(db, job.id)).state;
  },
  // Sizes after a full claim of 10-slot workers, at the defaults' 10 s heartbeat: handlers of 1 ms (fast), 5 ms
  // after 20 jobs (the pace bound), and 200 ms (slow: the default, concurrency).
  claimAheadFor: async (use: WorkerStrategies['claimAheadFor']) =>
    [
      { meanHandlerMs: 1, current: 10 },
      { meanHandlerMs: 5, current: 160 },
      { meanHandlerMs: 200, current: 10 },
    ].map((a) => use({ base: 10, concurrency: 10, lastClaimFull: true, longestWaitMs: 0, maxWaitMs: 5_000, ...a })),
  // A worker told rescue: false, one left at the default, one told true: which of them start a rescuer.
  runsRescuer: async (use: WorkerStrategies['runsRescuer']) => [use({ rescue: false }), use({}), use({ rescue: true })],
  // A 2-slot worker with none, one and both of its slots running a handler: how many more may start.
  freeSlots: async (use: WorkerStrategies['freeSlots']) => [use(0, 2), use(1, 2), use(2, 2)],
};

/** The cron materializer's decision, on the nights and outages its policies are about. */
const CRON_PROBES: Record<keyof CronStrategies, (use: any) => Promise<unknown>> = {
  dueOccurrences: async (use: CronStrategies['dueOccurrences']) => {
    const hour = 3_600_000;
    const night = (cron: string, dstPolicy: 'skip-first' | 'shift-both', dbNow: string) => {
      const dbNowMs = Date.parse(dbNow);
      return use({ spec: parseCron(cron), timezone: 'America/New_York', dstPolicy }, { fromMs: dbNowMs - hour, dbNowMs, horizonMs: dbNowMs + 3 * hour, catchUp: 'none', catchUpWindowMs: hour });
    };
    const outage = (() => {
      const dbNowMs = Date.parse('2026-06-15T13:00:30Z');
      return use({ spec: parseCron('*/15 * * * *'), timezone: 'UTC', dstPolicy: 'shift-first' }, { fromMs: dbNowMs - 3 * hour, dbNowMs, horizonMs: dbNowMs, catchUp: 'all', catchUpWindowMs: hour });
    })();
    return {
      springSkip: night('30 2 * * *', 'skip-first', '2026-03-08T05:00:00Z').enqueue,
      fallBoth: night('30 1 * * *', 'shift-both', '2026-11-01T04:00:00Z').enqueue,
      outageAll: outage.enqueue,
    };
  },
};

/** The depth gauge's series as /metrics would serve them, after one set: what a gauge-relabel mutant changes. */
async function servedDepth(): Promise<unknown> {
  const metrics = createMetrics();
  metrics.queueDepth.set({ queue: 'q', state: 'pending' }, 3);
  return (await metrics.queueDepth.get()).values;
}
const realDepth = await servedDepth();

describe('the mutant registry', () => {
  it('names, for every mutant, a built-in scenario and at least one change', () => {
    for (const [name, m] of entries) {
      expect(SCENARIOS[m.scenario], `${name} runs on ${m.scenario}`).toBeDefined();
      expect(m.changes.length, name).toBeGreaterThan(0);
    }
  });

  it.each(patches.map(([name, p]) => [name, p.query, p] as const))('%s: its patch of %s still applies, changes the query and prepares', async (name, query, patch) => {
    const original = (QUERY_SOURCES[patch.file] as Record<string, string>)[query];
    const text = patchedQueryText(name, patch);
    expect(text).not.toBe(original);
    for (const edit of patch.edits) expect(text).toContain(edit.replace);
    // LISTEN is a utility statement, which cannot be prepared: it runs instead, and stops listening again.
    if (/^LISTEN /m.test(text)) {
      await db.transaction(async (tx) => {
        await tx.query(text);
        await tx.query('UNLISTEN *');
      });
      return;
    }
    // The patched statement is still valid SQL whose parameters Postgres can type.
    await db.query(`PREPARE mutant_check AS ${text}`);
    await db.query('DEALLOCATE mutant_check');
  });

  it.each(entries.flatMap(([name, m]) => m.changes.flatMap((c) => (c.kind === 'strategy' ? [[name, c.strategy, c.use] as const] : []))))(
    '%s: its %s strategy really behaves differently from the real one',
    async (_name, strategy, use) => {
      const real = await PROBES[strategy](workerStrategies[strategy]);
      const broken = await PROBES[strategy](use);
      expect(broken).not.toEqual(real);
    },
  );

  it.each(entries.flatMap(([name, m]) => m.changes.flatMap((c) => (c.kind === 'cron-strategy' ? [[name, c.strategy, c.use] as const] : []))))(
    '%s: its cron %s strategy really decides differently from the real one',
    async (_name, strategy, use) => {
      const real = await CRON_PROBES[strategy](cronStrategies[strategy]);
      const broken = await CRON_PROBES[strategy](use);
      expect(broken).not.toEqual(real);
    },
  );

  it.each(entries.flatMap(([name, m]) => m.changes.flatMap((c) => (c.kind === 'red-recorder' ? [[name, c.event, c.use] as const] : []))))(
    '%s: its %s recorder really feeds other series than the real one',
    async (_name, event, use) => {
      // One event of the kind, through each recorder, read back as the text /metrics serves.
      const served = async (recorder: (...args: any[]) => void) => {
        const metrics = createMetrics();
        const payload = { jobId: 1, queue: 'q', priority: 0, attempt: 1, workerId: 'w', durationMs: 5, error: 'Error: boom', dbFailedAt: 0, retryAt: 0, dbClaimedAt: 0, runAt: 0, reason: 'x', phase: 'heartbeat', attempts: 1, nodeId: 'n', skewMs: 0 };
        recorder(metrics, payload, () => 'error');
        return metrics.registry.metrics();
      };
      expect(await served(use as any)).not.toEqual(await served(redRecorders[event] as any));
    },
  );

  it.each(entries.flatMap(([name, m]) => m.changes.flatMap((c) => (c.kind === 'otel-recorder' ? [[name, c.event, c.use] as const] : []))))(
    '%s: its %s OpenTelemetry recorder really records otherwise than the real one',
    (_name, event, use) => {
      // One event of the kind, through each recorder, into instruments that remember what they were given.
      const recorded = (recorder: (...args: any[]) => void) => {
        const calls: unknown[] = [];
        const m: OtelRed = { consumed: { add: (...a: unknown[]) => calls.push(['add', ...a]) }, duration: { record: (...a: unknown[]) => calls.push(['record', ...a]) } } as never;
        recorder(m, { jobId: 1, queue: 'q', priority: 0, attempt: 1, workerId: 'w', durationMs: 5, error: 'Error: boom', dbFailedAt: 0, retryAt: 0, dbClaimedAt: 0, runAt: 0 });
        return calls;
      };
      expect(recorded(use as any)).not.toEqual(recorded(otelRedRecorders[event] as any));
    },
  );

  it.each(entries.flatMap(([name, m]) => m.changes.flatMap((c) => (c.kind === 'table' ? [[name, c.table, c.entry, c.use] as const] : []))))(
    '%s: its %s entry %s answers otherwise than the real one',
    async (_name, table, entry, use) => {
      const probe = TABLE_PROBES[table][entry as keyof (typeof TABLE_PROBES)[typeof table]] as (f: unknown) => unknown;
      expect(await probe(use)).not.toEqual(await probe((INTERNAL_TABLES[table] as Record<string, unknown>)[entry]));
    },
  );

  it('applies every change of a mutant and undoes them all, leaving the real engine exactly', async () => {
    for (const [name, m] of entries) {
      const before = Object.fromEntries(Object.entries(QUERY_SOURCES).map(([f, qs]) => [f, { ...qs }]));
      const strategies = { ...workerStrategies };
      const cron = { ...cronStrategies };
      const recorders = { ...redRecorders };
      const otelRecorders = { ...otelRedRecorders };
      const tables = Object.fromEntries(Object.entries(INTERNAL_TABLES).map(([t, entries]) => [t, { ...entries }]));
      const env = { ...process.env };
      const expected = m.changes.map((c) =>
        c.kind === 'query' ? patchedQueryText(name, c) : c.kind === 'strategy' || c.kind === 'cron-strategy' || c.kind === 'red-recorder' || c.kind === 'otel-recorder' || c.kind === 'table' ? c.use : c.kind === 'env' ? c.value : undefined,
      );
      const undo = applyMutant(name);
      for (const [i, change] of m.changes.entries()) {
        if (change.kind === 'query') expect((QUERY_SOURCES[change.file] as Record<string, string>)[change.query]).toBe(expected[i]);
        else if (change.kind === 'strategy') expect(workerStrategies[change.strategy]).toBe(expected[i]);
        else if (change.kind === 'cron-strategy') expect(cronStrategies[change.strategy]).toBe(expected[i]);
        else if (change.kind === 'red-recorder') expect(redRecorders[change.event]).toBe(expected[i]);
        else if (change.kind === 'otel-recorder') expect(otelRedRecorders[change.event]).toBe(expected[i]);
        else if (change.kind === 'table') expect((INTERNAL_TABLES[change.table] as Record<string, unknown>)[change.entry]).toBe(expected[i]);
        else if (change.kind === 'env') expect(process.env[change.name]).toBe(expected[i]);
        else if (change.kind === 'ops-file') expect(loadOpsFile(change.file).text).not.toBe(shippedOpsText(change.file));
        // A database patch changes nothing in this process: the runner applies it in the run's database (applyDatabasePatches).
        else if (change.kind === 'database') expect(change.sql()).toMatch(/CREATE OR REPLACE FUNCTION/i);
        else expect(await servedDepth()).not.toEqual(realDepth);
      }
      expect(() => applyMutant(name), 'one mutant at a time').toThrow(/already applied/);
      undo();
      for (const file of OPS_FILES) expect(loadOpsFile(file).text).toBe(shippedOpsText(file));
      expect(await servedDepth()).toEqual(realDepth);
      expect(Object.fromEntries(Object.entries(QUERY_SOURCES).map(([f, qs]) => [f, { ...qs }]))).toEqual(before);
      expect({ ...workerStrategies }).toEqual(strategies);
      expect({ ...cronStrategies }).toEqual(cron);
      expect({ ...redRecorders }).toEqual(recorders);
      expect({ ...otelRedRecorders }).toEqual(otelRecorders);
      expect(Object.fromEntries(Object.entries(INTERNAL_TABLES).map(([t, entries]) => [t, { ...entries }]))).toEqual(tables);
      expect({ ...process.env }).toEqual(env);
    }
  });

  it.each(entries.flatMap(([name, m]) => m.changes.flatMap((c) => (c.kind === 'database' ? [[name, c.replaces] as const] : []))))(
    '%s: its database patch really replaces %s in a migrated database, and is refused where there is nothing to replace',
    async (name, fn) => {
      const mutant = MUTANTS[name as MutantName];
      const scratch = await freshDatabase({ maxConnections: 2 });
      const body = async () => (await scratch.db.query('SELECT p.prosrc FROM pg_proc p WHERE p.oid = to_regprocedure($1)', [fn])).rows[0]?.prosrc;
      const real = await body();
      expect(real).toEqual(expect.any(String));
      await applyDatabasePatches(name, mutant, scratch.db);
      expect(await body()).not.toBe(real);
      // Applied again, the function is already the mutant's: a patch that changes nothing is refused, not run under the mutant's name.
      await expect(applyDatabasePatches(name, mutant, scratch.db)).rejects.toThrow(/left .* as the migrations made it/);
    },
  );

  it.each(entries.flatMap(([name, m]) => m.changes.flatMap((c) => (c.kind === 'env' ? [[name, c.name] as const] : []))))(
    '%s: its %s really changes the settings of a connection the engine opens',
    async (name) => {
      const settings = async () => {
        const probe = new Db({ connectionString: url, maxConnections: 1 });
        try {
          return (await probe.query("SELECT current_setting('synchronous_commit') AS synchronous_commit")).rows[0];
        } finally {
          await probe.close();
        }
      };
      const real = await settings();
      const undo = applyMutant(name);
      try {
        expect(await settings()).not.toEqual(real);
      } finally {
        undo();
      }
      expect(await settings()).toEqual(real);
    },
  );

  it('fails loudly, naming the mutant and the query, when production changed under a patch', () => {
    const gone: QueryPatch = { kind: 'query', file: 'engine/worker/worker.sql', query: 'ClaimJobs', edits: [{ find: 'FOR UPDATE NOWAIT', replace: '' }] };
    expect(() => patchedQueryText('some-mutant', gone)).toThrow(/mutant some-mutant: .*exactly once in query ClaimJobs of engine\/worker\/worker.sql, found it 0 times/);
    const twice: QueryPatch = { ...gone, edits: [{ find: 'stampede.jobs j', replace: 'stampede.jobs j' }] };
    expect(() => patchedQueryText('some-mutant', twice)).toThrow(/found it 3 times/);
    const noop: QueryPatch = { ...gone, edits: [{ find: 'LIMIT (SELECT $2)', replace: 'LIMIT (SELECT $2)' }] };
    expect(() => patchedQueryText('some-mutant', noop)).toThrow(/changes nothing/);
    const unknown: QueryPatch = { ...gone, query: 'NoSuchQuery' };
    expect(() => patchedQueryText('some-mutant', unknown)).toThrow(/has no query "NoSuchQuery"/);
  });
});
