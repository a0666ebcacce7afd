// npm run bench:poll: what the poll interval costs and buys, side by side in one run.
// For each wake-up configuration one worker (4 slots, no-op handler) runs against one
// embedded Postgres: (1) idle for IDLE_S seconds: claim transactions per second and the
// server's CPU time per second spent on them; (2) 200 jobs offered at 20/s, due at once
// (NOTIFY can wake the worker) and due 300 ms after enqueue (only the poll finds them):
// due-to-claim latency p50/p99/max on the database clock.
import { readFileSync, readdirSync } from 'node:fs';
import { systemClock } from '../engine/clock.ts';
import { Db } from '../engine/db.ts';
import { enqueue } from '../engine/enqueue.ts';
import { Events } from '../engine/events.ts';
import { createLogger } from '../engine/log.ts';
import { migrate } from '../engine/migrator.ts';
import { SeededRng } from '../engine/rng.ts';
import { Worker } from '../engine/worker/worker.ts';
import { createDatabase } from '../harness/postgres/databases.ts';
import { provisionPostgres } from '../harness/postgres/provision.ts';
import { EmbeddedPostgres } from '../harness/postgres/embedded.ts';

const IDLE_S = 5;
const CONFIGS = [
  { label: 'poll 50 ms, no LISTEN', pollMs: 50, listen: false },
  { label: 'poll 250 ms, no LISTEN', pollMs: 250, listen: false },
  { label: 'poll 1000 ms, no LISTEN', pollMs: 1000, listen: false },
  { label: 'LISTEN + poll 1000 ms (default)', pollMs: 1000, listen: true },
];

/** CPU seconds (user + system) of the postmaster `root` and its backends, from /proc. */
function serverCpuSeconds(root: number): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pid) !== root && Number(f[1]) !== root) continue;
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // the process ended between readdir and read
    }
  }
  return ticks / 100;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];

async function main() {
  const log = createLogger('bench', 'warn');
  const server = await provisionPostgres({ log, prefer: 'embedded' });
  if (!(server instanceof EmbeddedPostgres) || !server.pid) throw new Error('the poll bench measures server CPU from /proc: it needs its own embedded server');
  const postmaster = server.pid;
  const rows: Record<string, string | number>[] = [];
  try {
    for (const [i, c] of CONFIGS.entries()) {
      const url = await createDatabase(server.adminUrl, `poll_${process.pid}_${i}`);
      const db = new Db({ connectionString: url, maxConnections: 8 });
      await migrate(db);
      // Count the worker's queries: an idle worker's cost is the claims (and suspect checks) it keeps making.
      let queries = 0;
      const query = db.query.bind(db);
      db.query = ((text: string, params?: unknown[]) => {
        queries++;
        return query(text, params);
      }) as typeof db.query;
      const events = new Events();
      const waits: { immediate: number[]; delayed: number[] } = { immediate: [], delayed: [] };
      const kinds = new Map<number, 'immediate' | 'delayed'>();
      events.on('job:claimed', (e) => waits[kinds.get(e.jobId) ?? 'immediate'].push(e.dbClaimedAt - e.runAt));
      const worker = new Worker({ db, handlers: { q: () => {} }, concurrency: 4, pollMs: c.pollMs, listen: c.listen, events, rng: new SeededRng(1), rescue: false });
      worker.start();
      await systemClock.sleep(1000);
      const [q0, cpu0] = [queries, serverCpuSeconds(postmaster)];
      await systemClock.sleep(IDLE_S * 1000);
      const [q1, cpu1] = [queries, serverCpuSeconds(postmaster)];
      for (let n = 0; n < 200; n++) {
        const delayed = n % 2 === 1;
        const job = await enqueue(db, 'q', {}, delayed ? { delayMs: 300 } : {});
        kinds.set(job.id, delayed ? 'delayed' : 'immediate');
        await systemClock.sleep(50);
      }
      await systemClock.sleep(Math.max(1500, c.pollMs * 2));
      await worker.stop(0);
      await db.close();
      rows.push({
        config: c.label,
        'idle queries/s': ((q1 - q0) / IDLE_S).toFixed(1),
        'server CPU ms/s idle': (((cpu1 - cpu0) * 1000) / IDLE_S).toFixed(1),
        'due-now p50/p99/max ms': `${pct(waits.immediate, 50)}/${pct(waits.immediate, 99)}/${Math.max(...waits.immediate)}`,
        'delayed p50/p99/max ms': `${pct(waits.delayed, 50)}/${pct(waits.delayed, 99)}/${Math.max(...waits.delayed)}`,
      });
    }
  } finally {
    await server.stop();
  }
  if (process.argv.includes('--json')) process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
  else console.table(rows);
}

await main();
