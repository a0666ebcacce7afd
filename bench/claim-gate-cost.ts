// npm run bench:claim-gate: what pause and the global limits (stampede.claim_gate,
// migrations/0010_control.sql) cost the claim. One embedded Postgres, 100k done rows
// beside 30k due jobs in each of three queues: `free` (no limit: the gate takes a
// shared lock), `in-flight` (max_in_flight far above what runs, so the limit never
// binds but the claim counts the claimed rows under an exclusive lock), `rate`
// (max_starts_per_second never binding: the token bucket is drawn under the lock),
// `keyed` (a fair queue, migrations/0016_fair_keys.sql: its 30k due jobs spread over
// 10,000 fairness keys, a per-key cap that never binds, so every claim walks the keys).
// Each client claims 10 jobs and completes them, repeatedly; 1 and 4 clients at once.
// Reports the claim's median / p95 round trip and claims per second, the median
// EXPLAIN ANALYZE execution time of one claim (rolled back) and of the gate function
// alone, interleaved over ROUNDS.
import { systemClock } from '../engine/clock.ts';
import { setQueueLimits } from '../engine/control/index.ts';
import { Db } from '../engine/db.ts';
import { createLogger } from '../engine/log.ts';
import { migrate } from '../engine/migrator.ts';
import { claimJobs } from '../engine/worker/claim.ts';
import { workerQueries as q } from '../engine/worker/queries.ts';
import { createDatabase } from '../harness/postgres/databases.ts';
import { provisionPostgres } from '../harness/postgres/provision.ts';

const ROUNDS = 3;
const CLAIMS_PER_CLIENT = 100;
const BATCH = 10;
const QUEUES = ['free', 'in-flight', 'rate', 'keyed'] as const;
const KEYS = 10_000;
const ops = { by: 'bench', reason: 'measure the claim gate', allowNew: true };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(0.95 * xs.length) - 1)];

async function clientLoop(db: Db, queue: string, id: string, latencies: number[]): Promise<void> {
  for (let i = 0; i < CLAIMS_PER_CLIENT; i++) {
    const t0 = systemClock.now();
    const jobs = await claimJobs(db, { queues: [queue], leaseMs: [60_000], limit: BATCH, workerId: id, agingMs: 5_000 });
    latencies.push(systemClock.now() - t0);
    await db.query(q.CompleteJobs, [jobs.map((j) => j.id).join(','), jobs.map((j) => j.leaseToken).join(',')]);
  }
}

/**
 * EXPLAIN ANALYZE of the claim exactly as claimJobs sends it (its own parameters), rolled back. claimJobs
 * sends a prepared-statement config ({ name, text, values }), which is unwrapped here: passed on as text,
 * it made every EXPLAIN fail and this figure NaN.
 */
async function explainMs(db: Db, queue: string): Promise<number> {
  let ms = NaN;
  await db
    .transaction(async (tx) => {
      const explaining = {
        query: async (config: string | { text: string; values?: unknown[] }, params?: unknown[]) => {
          const text = typeof config === 'string' ? config : config.text;
          const values = typeof config === 'string' ? params : config.values;
          const res = await tx.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
          ms = res.rows[0]['QUERY PLAN'][0]['Execution Time'];
          return { ...res, rows: [] };
        },
      };
      await claimJobs(explaining as never, { queues: [queue], leaseMs: [60_000], limit: BATCH, workerId: 'explain', agingMs: 5_000 });
      throw new Error('rollback');
    })
    .catch(() => {});
  return ms;
}

/** EXPLAIN ANALYZE of the gate alone (what every claim now runs first), ms. */
async function gateExplainMs(db: Db, queue: string): Promise<number> {
  const res = await db.query('EXPLAIN (ANALYZE, FORMAT JSON) SELECT * FROM stampede.claim_gate($1::text[], $2::int)', [[queue], BATCH]);
  return res.rows[0]['QUERY PLAN'][0]['Execution Time'];
}

async function main() {
  const log = createLogger('bench', 'warn');
  const server = await provisionPostgres({ log, prefer: 'embedded' });
  try {
    const url = await createDatabase(server.adminUrl, `claim_gate_${process.pid}`);
    const db = new Db({ connectionString: url, maxConnections: 8 });
    await migrate(db);
    await db.query(`INSERT INTO stampede.jobs (queue, state, attempts, finished_at) SELECT 'free', 'done', 1, now() FROM generate_series(1, 100000)`);
    for (const queue of QUEUES) {
      await db.query(
        `INSERT INTO stampede.jobs (queue, run_at, fairness_key)
         SELECT $1, now() - interval '1 s', CASE WHEN $1 = 'keyed' THEN 'tenant-' || (i % $2) END FROM generate_series(1, 30000) AS i`,
        [queue, KEYS],
      );
    }
    await setQueueLimits(db, 'keyed', { maxInFlight: null, maxStartsPerSecond: null, maxInFlightPerKey: 1_000_000 }, ops);
    await setQueueLimits(db, 'in-flight', { maxInFlight: 1_000_000, maxStartsPerSecond: null }, ops);
    await setQueueLimits(db, 'rate', { maxInFlight: null, maxStartsPerSecond: 1_000_000 }, ops);
    await db.query('VACUUM ANALYZE stampede.jobs');
    const figures = new Map<string, { lat: number[]; rate: number[]; explain: number[]; gate: number[] }>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const clients of [1, 4]) {
        for (const queue of QUEUES) {
          const key = `${queue} x${clients}`;
          const f = figures.get(key) ?? { lat: [], rate: [], explain: [], gate: [] };
          figures.set(key, f);
          const t0 = systemClock.now();
          await Promise.all(Array.from({ length: clients }, (_, i) => clientLoop(db, queue, `c${i}`, f.lat)));
          f.rate.push((clients * CLAIMS_PER_CLIENT) / ((systemClock.now() - t0) / 1000));
          if (clients === 1) {
            for (let i = 0; i < 10; i++) f.explain.push(await explainMs(db, queue));
            for (let i = 0; i < 10; i++) f.gate.push(await gateExplainMs(db, queue));
          }
        }
      }
    }
    const rows = [...figures].map(([key, f]) => ({
      'queue x clients': key,
      'claim p50 ms': median(f.lat).toFixed(2),
      'claim p95 ms': p95(f.lat).toFixed(2),
      'claims/s (median round)': median(f.rate).toFixed(0),
      'EXPLAIN ANALYZE p50 ms': f.explain.length ? median(f.explain).toFixed(3) : '',
      'of which the gate, p50 ms': f.gate.length ? median(f.gate).toFixed(3) : '',
    }));
    console.table(rows);
    console.log(JSON.stringify(rows));
    await db.close();
  } finally {
    await server.stop();
  }
}

await main();
