// The job state machine and the updated_at stamp (migrations/0012_cheap_state_machine.sql):
// the same guarantees as the one plpgsql trigger of 0001/0010, for every UPDATE of a job row,
// the engine's and a hand-written one alike.
import { readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import type { Queryable } from '../engine/db.ts';
import { enqueue } from '../engine/enqueue.ts';
import { claimJobs } from '../engine/worker/claim.ts';
import { workerQueries as q } from '../engine/worker/queries.ts';
import { freshDatabase } from './support/db.ts';
import { unqualified } from '../harness/postgres/schema-snapshot.ts';

const { db } = await freshDatabase();

const STATES = ['pending', 'claimed', 'failed', 'done', 'dead', 'cancelled'] as const;
type State = (typeof STATES)[number];
// The legal transitions of migrations/0010_control.sql (and docs/engine.md). Staying in a state is always allowed.
const LEGAL: Record<State, State[]> = {
  pending: ['claimed', 'dead', 'cancelled'],
  failed: ['claimed', 'dead', 'cancelled'],
  claimed: ['done', 'failed', 'pending', 'dead', 'cancelled'],
  dead: ['pending'],
  done: [],
  cancelled: [],
};

// A lease exactly when claimed (the claimed_has_lease constraint), so only the trigger can refuse.
const LEASE = `lease_owner = CASE WHEN $2 = 'claimed' THEN 'w' END,
               lease_token = CASE WHEN $2 = 'claimed' THEN gen_random_uuid() END,
               lease_expires_at = CASE WHEN $2 = 'claimed' THEN now() + interval '1 minute' END`;

/** A row in `state`, inserted so (an insert is never checked: only an UPDATE moves a job). */
async function jobIn(state: State): Promise<number> {
  const sql = `INSERT INTO stampede.jobs (queue, state, lease_owner, lease_token, lease_expires_at)
               SELECT 'sm', $1::stampede.job_state, lease_owner, lease_token, lease_expires_at
                 FROM (SELECT CASE WHEN $1 = 'claimed' THEN 'w' END AS lease_owner,
                              CASE WHEN $1 = 'claimed' THEN gen_random_uuid() END AS lease_token,
                              CASE WHEN $1 = 'claimed' THEN now() + interval '1 minute' END AS lease_expires_at) l
               RETURNING id`;
  return (await db.query(sql, [state])).rows[0].id;
}

const move = (id: number, to: State) => db.query(`UPDATE stampede.jobs SET state = $2::stampede.job_state, ${LEASE} WHERE id = $1`, [id, to]);

/**
 * Runs `write` in one transaction and returns updated_at and now() as that transaction saw them after it, in
 * microseconds (a Date keeps milliseconds, and an enqueue and its update can fall in the same one).
 */
async function stampAfter(id: number, write: (tx: Queryable) => Promise<unknown>): Promise<{ before: string; after: string; now: string }> {
  const us = (col: string) => `(extract(epoch FROM ${col}) * 1000000)::bigint::text`;
  const before = (await db.query(`SELECT ${us('updated_at')} AS t FROM stampede.jobs WHERE id = $1`, [id])).rows[0].t;
  return db.transaction(async (tx) => {
    await write(tx);
    const r = (await tx.query(`SELECT ${us('updated_at')} AS after, ${us('now()')} AS now FROM stampede.jobs WHERE id = $1`, [id])).rows[0];
    return { before, after: r.after, now: r.now };
  });
}

function expectStamped(s: { before: string; after: string; now: string }) {
  expect(s.after).toBe(s.now);
  expect(BigInt(s.after)).toBeGreaterThan(BigInt(s.before));
}

it('allows exactly the transitions of 0010 and refuses every other one with the same message and SQLSTATE', async () => {
  for (const from of STATES) {
    for (const to of STATES) {
      const id = await jobIn(from);
      if (from === to || LEGAL[from].includes(to)) {
        await expect(move(id, to), `${from} -> ${to}`).resolves.toMatchObject({ rowCount: 1 });
      } else {
        await expect(move(id, to), `${from} -> ${to}`).rejects.toMatchObject({
          code: '23514',
          message: `stampede: job ${id} may not go from ${from} to ${to}`,
        });
      }
    }
  }
});

it('stamps updated_at on the engine claim, heartbeat and completion', async () => {
  const job = await enqueue(db, 'stamp-engine', {});
  let token = '';
  expectStamped(
    await stampAfter(job.id, async (tx) => {
      const [claimed] = await claimJobs(tx, { queues: ['stamp-engine'], leaseMs: [60_000], limit: 1, workerId: 'w', agingMs: 1_000 });
      token = claimed.leaseToken;
    }),
  );
  expectStamped(await stampAfter(job.id, (tx) => tx.query(q.RenewLease, [job.id, token, 60_000])));
  expectStamped(await stampAfter(job.id, (tx) => tx.query(q.CompleteJobs, [String(job.id), token])));
});

it('stamps updated_at on a hand-written UPDATE that does not name it: a priority change, a state change', async () => {
  const job = await enqueue(db, 'stamp-hand', {});
  expectStamped(await stampAfter(job.id, (tx) => tx.query('UPDATE stampede.jobs SET priority = 5 WHERE id = $1', [job.id])));
  expectStamped(await stampAfter(job.id, (tx) => tx.query(`UPDATE stampede.jobs SET state = 'cancelled' WHERE id = $1`, [job.id])));
});

it('overrides an UPDATE that writes another updated_at, as the old trigger did: the rescuer never reads a past stamp', async () => {
  const job = await enqueue(db, 'stamp-back', {});
  const set = `UPDATE stampede.jobs SET priority = 1, updated_at = now() - interval '1 hour' WHERE id = $1`;
  expectStamped(await stampAfter(job.id, (tx) => tx.query(set, [job.id])));
});

it('two UPDATEs of one row in one transaction both leave updated_at = now()', async () => {
  const job = await enqueue(db, 'stamp-twice', {});
  const s = await stampAfter(job.id, async (tx) => {
    await tx.query('UPDATE stampede.jobs SET priority = 2 WHERE id = $1', [job.id]);
    await tx.query('UPDATE stampede.jobs SET priority = 3 WHERE id = $1', [job.id]);
    await tx.query(`UPDATE stampede.jobs SET run_at = now(), updated_at = now() WHERE id = $1`, [job.id]);
  });
  expectStamped(s);
});

/** How often each plpgsql function of 0012 ran during `write`, counted by the server (track_functions). */
async function plpgsqlCalls(write: (tx: Queryable) => Promise<unknown>): Promise<{ touch: number; refuse: number }> {
  return db.transaction(async (tx) => {
    await tx.query(`SET LOCAL track_functions = 'pl'`);
    await write(tx);
    const count = async (fn: string) =>
      Number((await tx.query(`SELECT coalesce(pg_stat_get_xact_function_calls($1::regprocedure), 0) AS n`, [fn])).rows[0].n);
    return { touch: await count('stampede.touch_job_updated_at()'), refuse: await count('stampede.refuse_job_transition()') };
  });
}

// Counting calls needs track_functions, which only a superuser (or, from PostgreSQL 15, a role
// granted SET on it) may set: a DATABASE_URL user with CREATEDB alone skips this one test.
const canCountCalls = await db.transaction((tx) => tx.query(`SET LOCAL track_functions = 'pl'`).then(() => true, () => false));

it.skipIf(!canCountCalls)('runs no plpgsql for the engine hot path, and the stamping function once per row for a hand-written UPDATE', async () => {
  const job = await enqueue(db, 'stamp-calls', {});
  const engine = await plpgsqlCalls(async (tx) => {
    const [claimed] = await claimJobs(tx, { queues: ['stamp-calls'], leaseMs: [60_000], limit: 1, workerId: 'w', agingMs: 1_000 });
    await tx.query(q.RenewLease, [job.id, claimed.leaseToken, 60_000]);
    await tx.query(q.CompleteJobs, [String(job.id), claimed.leaseToken]);
  });
  expect(engine).toEqual({ touch: 0, refuse: 0 });
  // In a transaction of its own: in the one above, updated_at already equals now() (see the migration).
  expect(await plpgsqlCalls((tx) => tx.query('UPDATE stampede.jobs SET priority = 4 WHERE id = $1', [job.id]))).toEqual({ touch: 1, refuse: 0 });
});

it('every UPDATE of stampede.jobs in engine/ sets updated_at = now() itself (else each of its rows pays a plpgsql call)', () => {
  const files = readdirSync(new URL('../engine/', import.meta.url), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.sql'));
  const missing: string[] = [];
  let updates = 0;
  for (const file of files) {
    const text = readFileSync(new URL(`../engine/${file}`, import.meta.url), 'utf8');
    // From the UPDATE to its RETURNING or the end of the statement: its SET list is in there.
    for (const m of text.matchAll(/UPDATE stampede\.jobs\b[\s\S]*?(?=RETURNING|;$)/gm)) {
      updates++;
      if (!/\bupdated_at = now\(\)/.test(m[0])) missing.push(`${file}: ${m[0].slice(0, 80)}`);
    }
  }
  // A floor, so a search that matches nothing cannot pass: 13 since the redrives became one statement (RedriveMany).
  expect(updates).toBeGreaterThanOrEqual(13);
  expect(missing).toEqual([]);
});

it('has the triggers the migration says: the legality test and the stamp test in WHEN clauses, nothing else per row', async () => {
  const rows = (
    await db.query(`SELECT tgname, pg_get_triggerdef(oid) AS def FROM pg_trigger
                     WHERE tgrelid = 'stampede.jobs'::regclass AND NOT tgisinternal ORDER BY tgname`)
  ).rows;
  expect(rows.map((r) => r.tgname)).toEqual(['jobs_notify', 'jobs_queue_name', 'jobs_state_machine', 'jobs_updated_at']);
  // Unqualified: whether Postgres writes `stampede.` before a name depends on the session's search_path.
  const def = Object.fromEntries(rows.map((r) => [r.tgname, unqualified(r.def.replace(/\s+/g, ' '))]));
  expect(def.jobs_notify).toMatch(/AFTER INSERT ON jobs FOR EACH STATEMENT/);
  // The queue-name rule (0013): only when a name is written, and only in its WHEN clause (test/queue-name-check.test.ts).
  expect(def.jobs_queue_name).toMatch(/^CREATE TRIGGER jobs_queue_name BEFORE INSERT OR UPDATE OF queue ON jobs FOR EACH ROW WHEN \(.*EXECUTE FUNCTION refuse_queue_name\(\)$/);
  expect(def.jobs_state_machine).toMatch(
    /^CREATE TRIGGER jobs_state_machine BEFORE UPDATE ON jobs FOR EACH ROW WHEN \(\(\(new\.state IS DISTINCT FROM old\.state\) AND (NOT|\(NOT).*EXECUTE FUNCTION refuse_job_transition\(\)$/,
  );
  for (const state of ['pending', 'failed', 'claimed', 'dead']) expect(def.jobs_state_machine).toContain(`old.state = '${state}'::job_state`);
  expect(def.jobs_updated_at).toBe(
    'CREATE TRIGGER jobs_updated_at BEFORE UPDATE ON jobs FOR EACH ROW WHEN ((new.updated_at IS DISTINCT FROM now())) EXECUTE FUNCTION touch_job_updated_at()',
  );
  // The refusing function has no test of its own: it raises whenever it runs.
  const body = (await db.query(`SELECT prosrc FROM pg_proc WHERE oid = 'stampede.refuse_job_transition()'::regprocedure`)).rows[0].prosrc;
  expect(body).not.toMatch(/\bIF\b/);
  expect(body).toMatch(/RAISE EXCEPTION 'stampede: job % may not go from % to %'.*USING ERRCODE = 'check_violation'/s);
});
