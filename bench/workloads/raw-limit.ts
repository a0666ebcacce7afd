import pg from 'pg';
import type { BenchContext } from '../context.ts';
import { wallMs } from '../proc.ts';
import { benchQueries as q } from '../queries.ts';

export interface RawLimitResult {
  /** Single-row INSERT commits per second from one client. */
  insert1PerSec: number;
  /** The same from 16 clients at once. */
  insert16PerSec: number;
  /** The same, 16 clients, into a table whose statement trigger sends a NOTIFY (as every queue here does on enqueue). */
  insertNotify16PerSec: number;
  /** Jobs/s of "claim 50 with SKIP LOCKED and mark done" in one statement, `clients` loops. */
  claimDonePerSec: number;
  /** Jobs/s of claim 50 then mark done as two commits (the least a queue that records claims does). */
  claimThenDonePerSec: number;
  /** The same two writes per job in one commit per batch: each claim marks the batch before it done. */
  doneWithNextClaimPerSec: number;
  clients: number;
}

async function clients(url: string, n: number): Promise<pg.Client[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const c = new pg.Client({ connectionString: url, application_name: 'stampede:bench-raw' });
      c.on('error', () => {});
      await c.connect();
      return c;
    }),
  );
}

/** Up to `total` single-row INSERT commits spread over `n` clients, at most `budgetMs`; commits per second. */
async function inserts(url: string, n: number, total: number, budgetMs: number, notify = false): Promise<number> {
  const cs = await clients(url, n);
  try {
    let next = 0;
    let done = 0;
    const started = wallMs();
    const deadline = started + budgetMs;
    await Promise.all(
      cs.map(async (c) => {
        while (next < total && wallMs() < deadline) {
          next++;
          await c.query(notify ? q.RawInsertOneNotify : q.RawInsertOne, ['{"t":0}']);
          done++;
        }
      }),
    );
    return done / ((wallMs() - started) / 1000);
  } finally {
    await Promise.all(cs.map((c) => c.end()));
  }
}

/** How a raw claim loop records its batch: done in the claim itself, done as a second commit, or done with the next claim. */
type ClaimShape = 'claim-and-done' | 'claim-then-done' | 'done-with-next-claim';

/**
 * Runs a raw batch again if Postgres broke a deadlock by rolling it back. Seen once in the done-with-next-claim shape,
 * whose one statement both updates this client's last batch and locks the next: the rolled-back batch changed
 * nothing, its rows are still this client's claims, and only committed batches are counted. A few tries at most, so
 * a deadlock that keeps coming back fails the run instead of hanging it.
 */
async function retryDeadlock<T>(run: () => Promise<T>, tries = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if ((err as { code?: string }).code !== '40P01' || attempt >= tries) throw err;
    }
  }
}

/** Drains `total` rows with `n` loops of the given claim; jobs per second. */
async function claims(url: string, n: number, total: number, shape: ClaimShape): Promise<number> {
  const setup = (await clients(url, 1))[0];
  await setup.query(q.RawTruncate);
  await setup.query(q.RawFill, [total]);
  await setup.query(q.RawVacuum);
  await setup.end();
  const cs = await clients(url, n);
  try {
    let done = 0;
    const started = wallMs();
    await Promise.all(
      cs.map(async (c) => {
        let claimed: number[] = [];
        for (;;) {
          if (shape === 'done-with-next-claim') {
            const res = await retryDeadlock(() => c.query(q.RawDoneThenClaim, [claimed]));
            done += claimed.length;
            claimed = res.rows.filter((r) => !r.done).map((r) => r.id);
            if (claimed.length === 0) return;
            continue;
          }
          const res = await c.query(shape === 'claim-then-done' ? q.RawClaim : q.RawClaimAndDone);
          if (res.rowCount === 0) return;
          if (shape === 'claim-then-done') await c.query(q.RawDone, [res.rows.map((r) => r.id)]);
          done += res.rowCount ?? 0;
        }
      }),
    );
    return done / ((wallMs() - started) / 1000);
  } finally {
    await Promise.all(cs.map((c) => c.end()));
  }
}

/**
 * The physical limit: what this Postgres commits when nothing but SQL runs,
 * on a table with only the columns a claim needs. Each queue's figures are
 * read against these.
 */
export async function runRawLimit(ctx: BenchContext, insertsTotal: number, claimTotal: number, claimClients: number, budgetMs: number): Promise<RawLimitResult> {
  const db = await ctx.emptyDatabase();
  try {
    const c = (await clients(db.url, 1))[0];
    await c.query(q.RawCreateTable);
    await c.end();
    const insert1PerSec = await inserts(db.url, 1, Math.round(insertsTotal / 4), budgetMs);
    const insert16PerSec = await inserts(db.url, 16, insertsTotal, budgetMs);
    const insertNotify16PerSec = await inserts(db.url, 16, insertsTotal, budgetMs, true);
    const claimDonePerSec = await claims(db.url, claimClients, claimTotal, 'claim-and-done');
    const claimThenDonePerSec = await claims(db.url, claimClients, claimTotal, 'claim-then-done');
    const doneWithNextClaimPerSec = await claims(db.url, claimClients, claimTotal, 'done-with-next-claim');
    return { insert1PerSec, insert16PerSec, insertNotify16PerSec, claimDonePerSec, claimThenDonePerSec, doneWithNextClaimPerSec, clients: claimClients };
  } finally {
    await db.drop();
  }
}
