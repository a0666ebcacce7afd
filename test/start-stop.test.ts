// Starting and stopping the long-running components in quick succession, in every interleaving, against a real
// Postgres: once every stop() has returned, each pool client the component took is back in the pool and each
// dedicated connection it opened is closed. A leak here starves the caller's pool (a user shares one pool between the
// worker and their own enqueues) or leaves a backend open for good.
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock.ts';
import { CronMaterializer } from '../engine/cron/materializer.ts';
import { Db } from '../engine/db.ts';
import { OutboxRelay } from '../engine/effects/relay.ts';
import { Pruner } from '../engine/effects/pruner.ts';
import { JobArchiver } from '../engine/archive/job-archiver.ts';
import { enqueue, enqueueMany } from '../engine/enqueue.ts';
import { Events } from '../engine/events.ts';
import { createLogger } from '../engine/log.ts';
import { QueueStateSampler } from '../engine/metrics/queue-state-sampler.ts';
import { SeededRng, type Rng } from '../engine/rng.ts';
import { LeaseRescuer } from '../engine/worker/rescuer.ts';
import { Worker } from '../engine/worker/worker.ts';
import { freshDatabase } from './support/db.ts';
import { until } from './support/wait.ts';

const { url } = await freshDatabase();
/** The caller's own pool, which every component here shares, as the README's examples do. */
const APP = 'stampede_startstop';
const db = new Db({ connectionString: url, maxConnections: 10, applicationName: APP });
afterAll(() => db.close());
const silent = createLogger('start-stop', 'silent');
const ITERATIONS = Number(process.env.START_STOP_ITERATIONS ?? 150);

interface Component {
  start(): void;
  stop(): Promise<void>;
}

/** The components under test, each on the shared pool, each with its defaults except what keeps the test quiet. */
const makers: Record<string, (rng: Rng) => Component> = {
  worker: (rng) => {
    // Half of them are stopped only once a job of their own is running, so stop() surely finds one in flight; the
    // others may or may not have claimed one of the round's shared jobs by then.
    const own = `startstop_${++workersMade}`;
    let running!: () => void;
    const started = new Promise<void>((resolve) => (running = resolve));
    const run = (_p: unknown, { signal }: { signal: AbortSignal }) => (running(), aborted(signal));
    const w = new Worker({ db, rng, log: silent, handlers: { startstop: run, [own]: run } });
    const busy = rng.int(0, 1) === 0 ? enqueue(db, own, {}).then(() => started) : null;
    const graceMs = rng.int(0, 1) === 0 ? 0 : rng.int(1, 30);
    return { start: () => w.start(), stop: async () => (await busy, await w.stop(graceMs)) };
  },
  rescuer: () => new LeaseRescuer({ db, log: silent }),
  cron: () => new CronMaterializer({ db, nodeId: 'startstop', clock: systemClock, events: new Events(), log: silent }),
  relay: () => new OutboxRelay({ db, deliver: async () => {}, log: silent }),
  pruner: () => new Pruner({ db, log: silent }),
  archiver: () => new JobArchiver({ db, log: silent }),
  sampler: () => new QueueStateSampler(db, systemClock, null, {}, silent),
  electedSampler: () => new QueueStateSampler(db, systemClock, null, { elect: true }, silent),
};

let workersMade = 0;

/** Handlers that were running when their worker stopped (each runs until stop() aborts it). */
let abortedHandlers = 0;

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(void abortedHandlers++), { once: true }));
}

/** Waits a seeded while: nothing, the rest of this turn, or a few ms, so stop() lands at varied points of start-up. */
async function jitter(rng: Rng): Promise<void> {
  const pick = rng.int(0, 3);
  if (pick === 1) await Promise.resolve();
  if (pick === 2) await new Promise((resolve) => setImmediate(resolve));
  if (pick === 3) await systemClock.sleep(rng.int(1, 15));
}

const HOW = ['stop once', 'stop once', 'stop twice at once', 'stop twice in turn', 'start twice'] as const;

/** One start/stop of `c` in a seeded interleaving; a stop() that never returns fails it, naming the component and how. */
async function cycle(name: string, c: Component, rng: Rng): Promise<void> {
  const how = rng.int(0, HOW.length - 1);
  c.start();
  if (how === 4) c.start();
  await jitter(rng);
  const stopped = (async () => {
    if (how === 2) await Promise.all([c.stop(), c.stop()]);
    else await c.stop();
    if (how === 3) await c.stop();
  })();
  await until(`${name}.stop() to return (${HOW[how]})`, () => settled(stopped), 15_000, 10);
}

/** Whether `p` has settled (rethrowing its error). */
async function settled(p: Promise<void>): Promise<boolean> {
  return Promise.race([p.then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))]);
}

/** Backends of the test's pool, and those of its dedicated connections, other than the one asking. */
async function backends(): Promise<{ pool: { state: string }[]; dedicated: { application_name: string }[] }> {
  const rows = (
    await db.query(
      `SELECT application_name, state FROM pg_stat_activity
        WHERE datname = current_database() AND application_name LIKE $1 AND pid <> pg_backend_pid()`,
      [`${APP}%`],
    )
  ).rows;
  return { pool: rows.filter((r) => r.application_name === APP), dedicated: rows.filter((r) => r.application_name !== APP) };
}

describe('start and stop in quick succession', () => {
  it(`leaves the caller's pool whole and no connection open, over ${ITERATIONS} seeded rounds of every component`, async () => {
    const seed = Number(process.env.START_STOP_SEED ?? 20261207);
    const rng = new SeededRng(seed);
    for (let i = 0; i < ITERATIONS; i++) {
      // Jobs for the workers to hold when stop(0) comes: their handlers run until aborted.
      if (rng.int(0, 1) === 0) await enqueueMany(db, Array.from({ length: rng.int(1, 12) }, () => ({ queue: 'startstop', payload: {} })));
      const names = Object.keys(makers).filter(() => rng.int(0, 2) > 0);
      const components = names.flatMap((name) => Array.from({ length: rng.int(1, 3) }, () => ({ name, c: makers[name](rng) })));
      await Promise.all(components.map(({ name, c }) => cycle(name, c, rng)));
      const context = `seed ${seed}, round ${i}, components ${names.join(',')}`;
      expect({ checkedOut: db.pool.totalCount - db.pool.idleCount, waiting: db.pool.waitingCount }, context).toEqual({ checkedOut: 0, waiting: 0 });
      // A LISTEN whose stop() came while its query ran is cut by destroying the socket (pg does so under an active
      // query): its backend exits when it next reads the socket, moments after stop() returned. A leaked one stays.
      let { pool, dedicated } = await backends();
      for (const until = Date.now() + 2_000; dedicated.length && Date.now() < until; ({ pool, dedicated } = await backends())) await systemClock.sleep(20);
      expect(dedicated, context).toEqual([]);
      expect(pool.filter((b) => b.state !== 'idle'), context).toEqual([]);
      expect(pool.length, context).toBeLessThanOrEqual(db.pool.totalCount);
    }
    expect(abortedHandlers, 'stop(0) came with jobs in flight').toBeGreaterThan(0);
    // The pool still answers with every connection at once.
    const answers = await Promise.all(Array.from({ length: 10 }, () => db.query('SELECT 1 AS one')));
    expect(answers.map((r) => r.rows[0].one)).toEqual(Array(10).fill(1));
    await until('no job left claimed', async () => (await db.query("SELECT count(*)::int AS n FROM stampede.jobs WHERE state = 'claimed'")).rows[0].n === 0);
  }, 60_000 + ITERATIONS * 1_000); // a hang fails sooner, in its round (cycle); a loaded machine takes its time
});
