import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../engine/clock.ts';
import { ValidationError } from '../engine/errors.ts';
import type { Logger } from '../engine/log.ts';
import { JobArchiver, type ArchivePass, type JobArchiverOptions } from '../engine/archive/job-archiver.ts';
import { freshDatabase } from './support/db.ts';

const { db } = await freshDatabase();
const HOUR = 3_600_000;

/** Seeds jobs straight into a state, finished `agoMs` before the database's now(). Returns their ids. */
async function seed(state: 'pending' | 'claimed' | 'done' | 'failed' | 'dead', n: number, agoMs = 0, payload: object = {}): Promise<number[]> {
  const res = await db.query(
    `INSERT INTO stampede.jobs (queue, state, attempts, payload, errors, finished_at, lease_owner, lease_token, lease_expires_at, last_error)
     SELECT 'archive', $1::stampede.job_state, 1, $3::jsonb || jsonb_build_object('i', g), '[{"attempt":1,"error":"boom"}]'::jsonb,
            CASE WHEN $1 IN ('done', 'dead') THEN now() - make_interval(secs => $4::float8 / 1000) END,
            CASE WHEN $1 = 'claimed' THEN 'w1' END, CASE WHEN $1 = 'claimed' THEN gen_random_uuid() END,
            CASE WHEN $1 = 'claimed' THEN now() + interval '30 seconds' END,
            CASE WHEN $1 IN ('dead', 'failed') THEN 'boom' END
       FROM generate_series(1, $2::int) g
     RETURNING id`,
    [state, n, JSON.stringify(payload), agoMs],
  );
  const ids = res.rows.map((r) => r.id as number);
  if (state === 'dead') {
    await db.query(
      `INSERT INTO stampede.dead_letters (job_id, queue, payload, attempts, code, reason, errors)
       SELECT id, queue, payload, attempts, 'attempts_exhausted', 'attempts exhausted', errors FROM stampede.jobs WHERE id = ANY($1)`,
      [ids],
    );
  }
  return ids;
}

const idsIn = async (table: 'stampede.jobs' | 'stampede.job_history'): Promise<number[]> =>
  (await db.query(`SELECT id FROM ${table} ORDER BY id`)).rows.map((r) => r.id);

/**
 * The conservation check: every seeded job is in exactly one of the two
 * tables. Pure over the two id lists, so it can be shown to fail.
 */
function conservation(seeded: number[], hot: number[], history: number[]): { lost: number[]; duplicated: number[]; unexpected: number[] } {
  const seen = new Map<number, number>();
  for (const id of [...hot, ...history]) seen.set(id, (seen.get(id) ?? 0) + 1);
  const want = new Set(seeded);
  return {
    lost: seeded.filter((id) => !seen.has(id)),
    duplicated: [...seen].filter(([, n]) => n > 1).map(([id]) => id),
    unexpected: [...seen.keys()].filter((id) => !want.has(id)),
  };
}

const partitions = async (): Promise<string[]> =>
  (
    await db.query(
      `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'stampede.job_history'::regclass ORDER BY 1`,
    )
  ).rows.map((r) => r.relname);

const dayName = async (offsetDays: number): Promise<string> =>
  (await db.query(`SELECT stampede.job_history_partition_name(((now() AT TIME ZONE 'UTC')::date + $1::int)) AS n`, [offsetDays])).rows[0].n;

/** Fault injection: history refuses any row whose payload has a `poison` key. */
async function refusePoison(): Promise<void> {
  await db.query(`CREATE OR REPLACE FUNCTION stampede.test_refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.payload ? 'poison' THEN RAISE EXCEPTION 'injected: history refuses this row'; END IF; RETURN NEW; END $$`);
  await db.query('CREATE TRIGGER refuse_poison BEFORE INSERT ON stampede.job_history FOR EACH ROW EXECUTE FUNCTION stampede.test_refuse_poison()');
}

const archiver = (o: Partial<JobArchiverOptions> = {}) => new JobArchiver({ db, archiveAfterMs: HOUR, ...o });

beforeEach(async () => {
  await db.query('TRUNCATE stampede.jobs, stampede.job_history CASCADE');
  // Every partition goes: as if retention had passed for all of them.
  await db.query(`SELECT stampede.drop_job_history_partitions(1, now() + interval '400 days')`);
  await db.query('DROP TRIGGER IF EXISTS refuse_poison ON stampede.job_history');
});

describe('JobArchiver', () => {
  it('moves done jobs older than archiveAfterMs to history, whole, and leaves everything else in place', async () => {
    const old = await seed('done', 5, 2 * HOUR, { kind: 'old' });
    const recent = await seed('done', 3, 10 * 60_000);
    const others = [...(await seed('pending', 2)), ...(await seed('claimed', 1)), ...(await seed('failed', 1))];
    const dead = await seed('dead', 2, 2 * HOUR);
    const before = (await db.query('SELECT * FROM stampede.jobs WHERE id = ANY($1) ORDER BY id', [old])).rows;

    const pass = await archiver().runOnce();

    expect(pass.moved).toBe(5);
    expect(await idsIn('stampede.job_history')).toEqual(old);
    expect(await idsIn('stampede.jobs')).toEqual([...recent, ...others, ...dead].sort((a, b) => a - b));
    // Dead jobs stay, and so do their dead letters.
    expect((await db.query('SELECT count(*)::int AS n FROM stampede.dead_letters')).rows[0].n).toBe(2);
    const after = (await db.query('SELECT * FROM stampede.job_history ORDER BY id')).rows;
    for (const [i, row] of after.entries()) {
      for (const col of ['id', 'queue', 'priority', 'state', 'attempts', 'max_attempts', 'crash_count', 'last_error', 'idempotency_key']) {
        expect(row[col]).toEqual(before[i][col]);
      }
      expect(row.payload).toEqual(before[i].payload);
      expect(row.errors).toEqual(before[i].errors);
      expect(row.finished_at.getTime()).toBe(before[i].finished_at.getTime());
      expect(row.created_at.getTime()).toBe(before[i].created_at.getTime());
    }
    const all = [...old, ...recent, ...others, ...dead];
    expect(conservation(all, await idsIn('stampede.jobs'), await idsIn('stampede.job_history'))).toEqual({ lost: [], duplicated: [], unexpected: [] });
  });

  it('the conservation check catches a lost and a duplicated job (negative control)', () => {
    expect(conservation([1, 2, 3], [1], [2])).toEqual({ lost: [3], duplicated: [], unexpected: [] });
    expect(conservation([1, 2], [1, 2], [2])).toEqual({ lost: [], duplicated: [2], unexpected: [] });
    expect(conservation([1], [1, 9], [])).toEqual({ lost: [], duplicated: [], unexpected: [9] });
  });

  it('works in LIMITed batches and stops a pass at maxBatchesPerRun', async () => {
    const old = await seed('done', 10, 2 * HOUR);
    const a = archiver({ batchSize: 3, maxBatchesPerRun: 2 });
    expect(await a.runOnce()).toMatchObject({ moved: 6, batches: 2 });
    expect((await idsIn('stampede.jobs')).length).toBe(4);
    expect(await a.runOnce()).toMatchObject({ moved: 4, batches: 2 });
    expect(await idsIn('stampede.job_history')).toEqual(old);
  });

  it('skips a row another transaction holds (SKIP LOCKED) without waiting, and takes it on a later pass', async () => {
    const old = await seed('done', 4, 2 * HOUR);
    const holder = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM stampede.jobs WHERE id = $1 FOR UPDATE', [old[0]]);
      const pass = await archiver().runOnce();
      expect(pass.moved).toBe(3);
      // The fault really happened: the locked row is still in the hot table.
      expect(await idsIn('stampede.jobs')).toEqual([old[0]]);
      await holder.query('COMMIT');
    } finally {
      holder.release();
    }
    expect((await archiver().runOnce()).moved).toBe(1);
    expect(await idsIn('stampede.job_history')).toEqual(old);
  });

  it('creates day partitions ahead and for the oldest rows, and drops those past retention whole', async () => {
    const tenDays = await seed('done', 2, 10 * 24 * HOUR);
    const threeDays = await seed('done', 3, 3 * 24 * HOUR);
    const today = await seed('done', 1, 2 * HOUR);
    const pass = await archiver({ retentionDays: 7, partitionsAheadDays: 2 }).runOnce();

    expect(pass.moved).toBe(6);
    const tenDaysName = (await db.query(`SELECT stampede.job_history_partition_name(((now() - interval '10 days') AT TIME ZONE 'UTC')::date) AS n`)).rows[0].n;
    expect(pass.partitionsCreated).toContain(tenDaysName);
    for (const d of [0, 1, 2]) expect(await partitions()).toContain(await dayName(d));
    // The 10-day-old partition was filled, then dropped as a whole in the same
    // pass, with the (empty) days after it that are also past retention; the
    // first day kept is today - 7.
    expect(pass.partitionsDropped).toContain(tenDaysName);
    const firstKept = await dayName(-7);
    expect(pass.partitionsDropped.every((n) => n < firstKept)).toBe(true);
    expect(await partitions()).toContain(firstKept);
    expect(await partitions()).not.toContain(tenDaysName);
    expect((await db.query('SELECT to_regclass($1) AS r', [`stampede.${tenDaysName}`])).rows[0].r).toBeNull();
    expect(await idsIn('stampede.job_history')).toEqual([...threeDays, ...today]);
    expect(conservation([...threeDays, ...today], await idsIn('stampede.jobs'), await idsIn('stampede.job_history')).lost).toEqual([]);
    // Its rows left the hot table and then left with their partition: expired by retention, as intended.
    const hot = await idsIn('stampede.jobs');
    expect(tenDays.filter((id) => hot.includes(id))).toEqual([]);

    // A second pass creates nothing new and drops nothing more.
    const again = await archiver({ retentionDays: 7, partitionsAheadDays: 2 }).runOnce();
    expect(again).toMatchObject({ moved: 0, partitionsCreated: [], partitionsDropped: [] });
  });

  it('a batch that cannot be stored moves nothing: the DELETE rolls back with the INSERT', async () => {
    const old = await seed('done', 3, 2 * HOUR);
    await seed('done', 1, 2 * HOUR, { poison: true });
    await refusePoison();
    await expect(archiver().runOnce()).rejects.toThrow(/injected: history refuses this row/);
    expect((await idsIn('stampede.jobs')).length).toBe(4);
    expect(await idsIn('stampede.job_history')).toEqual([]);
    await db.query('DROP TRIGGER refuse_poison ON stampede.job_history');
    expect((await archiver().runOnce()).moved).toBe(4);
    expect((await idsIn('stampede.job_history')).filter((id) => old.includes(id))).toEqual(old);
  });

  it('start() and stop() are idempotent; the loop logs a failed pass and carries on', async () => {
    await seed('done', 2, 2 * HOUR, { poison: true });
    await refusePoison();
    const clock = new ManualClock(0);
    const warnings: string[] = [];
    let warned!: () => void;
    const firstWarning = new Promise<void>((r) => (warned = r));
    const log: Logger = {
      debug() {},
      info() {},
      warn: (msg, f) => {
        warnings.push(`${msg} ${String(f?.error)}`);
        warned();
      },
      error() {},
      child: () => log,
    };
    const passes: ArchivePass[] = [];
    let passed!: (p: ArchivePass) => void;
    const firstGoodPass = new Promise<ArchivePass>((r) => (passed = r));
    const a = archiver({ clock, log, intervalMs: 1_000, onPass: (p) => (passes.push(p), passed(p)) });
    a.start();
    a.start();
    await firstWarning;
    expect(warnings[0]).toMatch(/archive pass failed.*injected/);
    expect(passes).toEqual([]);
    await db.query('DROP TRIGGER refuse_poison ON stampede.job_history');
    // Move time until the sleeping loop wakes and passes (a condition, not a fixed sleep).
    let good: ArchivePass | undefined;
    void firstGoodPass.then((p) => (good = p));
    while (!good) {
      clock.advance(1_000);
      await new Promise((r) => setImmediate(r));
    }
    expect(good.moved).toBe(2);
    await a.stop();
    await a.stop();
    const count = passes.length;
    clock.advance(10_000);
    await new Promise((r) => setImmediate(r));
    expect(passes.length).toBe(count);
  });

  it('refuses bad options, naming the option', () => {
    expect(() => new JobArchiver({ db, batchSize: 0 })).toThrow(ValidationError);
    expect(() => new JobArchiver({ db, batchSize: 0 })).toThrow(/batchSize: 0 is not an integer in \[1, /);
    expect(() => new JobArchiver({ db, retentionDays: 1.5 })).toThrow(/retentionDays/);
    expect(() => new JobArchiver({ db, archiveAfterMs: -1 })).toThrow(/archiveAfterMs/);
    expect(() => new JobArchiver({ db, partitionsAheadDays: 0 })).toThrow(/partitionsAheadDays/);
  });

  it('the partition functions refuse nonsense, naming the argument', async () => {
    await expect(db.query('SELECT stampede.drop_job_history_partitions(0)')).rejects.toThrow(/retention_days: expected a number of days >= 1, got 0/);
    await expect(db.query('SELECT stampede.create_job_history_partitions(-1)')).rejects.toThrow(/ahead_days/);
  });
});
