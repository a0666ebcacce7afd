import { describe, expect, it } from 'vitest';
import { enqueue, enqueueMany, setQueueMaxAttempts } from '../engine/enqueue.ts';
import { DEFAULTS } from '../engine/defaults.ts';
import { ValidationError } from '../engine/errors.ts';
import { freshDatabase } from './support/db.ts';

const { db } = await freshDatabase();
const count = async (queue: string) =>
  (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM stampede.jobs WHERE queue = $1', [queue])).rows[0].n;

describe('enqueue', () => {
  it('commits one row before it resolves, with the options given', async () => {
    const job = await enqueue(db, 'mail', { to: 'a@example.com' }, { priority: 7, maxAttempts: 3 });
    const row = (await db.query('SELECT * FROM stampede.jobs WHERE id = $1', [job.id])).rows[0];
    expect(row).toMatchObject({ queue: 'mail', state: 'pending', priority: 7, max_attempts: 3, attempts: 0 });
    expect(row.payload).toEqual({ to: 'a@example.com' });
    expect(job.inserted).toBe(true);
  });

  it('schedules by delay from the database clock, or at an explicit instant, one job or a batch', async () => {
    const [{ now }] = (await db.query('SELECT now() AS now')).rows;
    const delayed = await enqueue(db, 'later', {}, { delayMs: 60_000 });
    const [bulkDelayed] = await enqueueMany(db, [{ queue: 'later', payload: {}, options: { delayMs: 60_000 } }]);
    const [{ after }] = (await db.query('SELECT now() AS after')).rows;
    // delayMs after the database's now() at the insert: between the reads before and after it, a unit slip (s, cs) far outside.
    for (const job of [delayed, bulkDelayed]) {
      expect(job.runAt.getTime() - now.getTime()).toBeGreaterThanOrEqual(60_000);
      expect(job.runAt.getTime() - after.getTime()).toBeLessThanOrEqual(60_000);
    }
    const at = new Date('2030-01-01T00:00:00Z');
    expect((await enqueue(db, 'later', {}, { runAt: at })).runAt.toISOString()).toBe(at.toISOString());
    expect((await enqueueMany(db, [{ queue: 'later', payload: {}, options: { runAt: at } }]))[0].runAt.toISOString()).toBe(at.toISOString());
  });

  it('returns the first job for a repeated idempotency key and inserts nothing', async () => {
    const first = await enqueue(db, 'dedupe', { n: 1 }, { idempotencyKey: 'order-42' });
    const second = await enqueue(db, 'dedupe', { n: 2 }, { idempotencyKey: 'order-42' });
    expect(second).toMatchObject({ id: first.id, inserted: false });
    expect(await count('dedupe')).toBe(1);
  });

  it('collapses concurrent enqueues of one key to one row', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, () => enqueue(db, 'race', {}, { idempotencyKey: 'same-key' })),
    );
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(results.filter((r) => r.inserted)).toHaveLength(1);
    expect(await count('race')).toBe(1);
  });

  it("commits or rolls back with the caller's own transaction", async () => {
    await db.transaction(async (tx) => {
      await enqueue(tx, 'in-tx', { kept: true });
    });
    await expect(
      db.transaction(async (tx) => {
        await enqueue(tx, 'in-tx', { kept: false });
        throw new Error('caller gives up');
      }),
    ).rejects.toThrow('caller gives up');
    const rows = (await db.query("SELECT payload FROM stampede.jobs WHERE queue = 'in-tx'")).rows;
    expect(rows.map((r) => r.payload)).toEqual([{ kept: true }]);
  });

  it('bulk-enqueues in one statement and skips keys that exist', async () => {
    await enqueue(db, 'bulk', {}, { idempotencyKey: 'bulk-3' });
    const jobs = Array.from({ length: 5000 }, (_, i) => ({
      queue: 'bulk',
      payload: { i },
      options: { idempotencyKey: `bulk-${i}`, priority: i % 10 },
    }));
    const inserted = await enqueueMany(db, jobs);
    expect(inserted).toHaveLength(4999);
    expect(await count('bulk')).toBe(5000);
  });

  it("gives a job without its own maxAttempts its queue's budget (setQueueMaxAttempts), one at a time and in bulk; its own wins; other queues keep the default", async () => {
    const budget = async (id: number) => (await db.query('SELECT max_attempts FROM stampede.jobs WHERE id = $1', [id])).rows[0].max_attempts;
    const unset = await enqueue(db, 'budgeted', {});
    expect(await budget(unset.id)).toBe(DEFAULTS.maxAttempts);
    await setQueueMaxAttempts(db, 'budgeted', 2);
    const one = await enqueue(db, 'budgeted', {});
    const own = await enqueue(db, 'budgeted', {}, { maxAttempts: 9 });
    const [bulk, bulkOwn, other] = await enqueueMany(db, [
      { queue: 'budgeted', payload: {} },
      { queue: 'budgeted', payload: {}, options: { maxAttempts: 9 } },
      { queue: 'unbudgeted', payload: {} },
    ]);
    expect([await budget(one.id), await budget(own.id), await budget(bulk.id), await budget(bulkOwn.id), await budget(other.id)]).toEqual([2, 9, 2, 9, DEFAULTS.maxAttempts]);
    // A job enqueued before the budget keeps what it was given then; a later setting applies to later jobs.
    expect(await budget(unset.id)).toBe(DEFAULTS.maxAttempts);
    await setQueueMaxAttempts(db, 'budgeted', 4);
    expect(await budget((await enqueue(db, 'budgeted', {})).id)).toBe(4);
  });
});

describe('enqueue refuses bad input before writing anything', () => {
  const cyclic: any = { a: 1 };
  cyclic.self = cyclic;
  const cases: [string, () => Promise<unknown>, string][] = [
    ['function payload', () => enqueue(db, 'bad', { f: () => 1 }), 'payload.f'],
    ['BigInt payload', () => enqueue(db, 'bad', { n: 10n }), 'payload.n'],
    ['cyclic payload', () => enqueue(db, 'bad', cyclic), 'payload.self'],
    ['undefined payload', () => enqueue(db, 'bad', undefined), 'payload'],
    ['NaN in payload', () => enqueue(db, 'bad', { x: [1, NaN] }), 'payload.x[1]'],
    ['oversized payload', () => enqueue(db, 'bad', 'x'.repeat(2000), { maxPayloadBytes: 1000 }), 'payload'],
    ['empty queue', () => enqueue(db, '', {}), 'queue'],
    ['malformed queue', () => enqueue(db, 'has space', {}), 'queue'],
    ['invalid date', () => enqueue(db, 'bad', {}, { runAt: 'next tuesday' }), 'runAt'],
    ['zero max attempts', () => enqueue(db, 'bad', {}, { maxAttempts: 0 }), 'maxAttempts'],
    ['priority out of range', () => enqueue(db, 'bad', {}, { priority: 12 }), 'priority'],
    ['bad job in a batch', () => enqueueMany(db, [{ queue: 'bad', payload: {} }, { queue: 'bad', payload: () => 1 }]), 'jobs[1].payload'],
    // Postgres refused these with a bare SQLSTATE (22P05, 22P02, 22021): refused here, the field is named.
    ['U+0000 in a payload string', () => enqueue(db, 'bad', { s: 'a\u0000b' }), 'payload.s'],
    ['U+0000 in a payload key', () => enqueue(db, 'bad', { ['k\u0000']: 1 }), 'payload'],
    ['a lone surrogate in a payload', () => enqueue(db, 'bad', { s: ['ok', '\ud83d'] }), 'payload.s[1]'],
    ['U+0000 in an idempotency key', () => enqueue(db, 'bad', {}, { idempotencyKey: 'k\u0000' }), 'idempotencyKey'],
    // Ignored before: the job ran at once, or at priority 0.
    ['a misspelt option', () => enqueue(db, 'bad', {}, { runat: new Date(Date.now() + 3_600_000) } as any), 'options.runat'],
    ['an option beside a bulk job, not in its options', () => enqueueMany(db, [{ queue: 'bad', payload: {}, priority: 9 } as any]), 'jobs[0].priority'],
    ['a bulk batch that is not an array', () => enqueueMany(db, { queue: 'bad', payload: {} } as any), 'jobs'],
    ['a priority given as a string', () => enqueue(db, 'bad', {}, { priority: '3' as any }), 'priority'],
  ];
  it.each(cases)('%s', async (_label, call, field) => {
    const err = await call().then(
      () => null,
      (e) => e,
    );
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.field).toBe(field);
    expect(err.message).toContain(field);
  });

  it('takes what only looks unusual: a surrogate pair (an emoji) in a payload and a key', async () => {
    const job = await enqueue(db, 'emoji', { s: 'ship it 🚀' }, { idempotencyKey: 'key-🚀' });
    const row = (await db.query('SELECT payload, idempotency_key FROM stampede.jobs WHERE id = $1', [job.id])).rows[0];
    expect(row).toEqual({ payload: { s: 'ship it 🚀' }, idempotency_key: 'key-🚀' });
  });

  it('wrote none of them', async () => {
    expect(await count('bad')).toBe(0);
  });
});
