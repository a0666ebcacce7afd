// The pruner: dedup keys and delivered outbox rows older than the retention
// go, in batches; newer ones, pending and dead rows stay. And the trade-off,
// shown: a replay older than the retention is no longer recognised.
import { afterEach, describe, expect, it } from 'vitest';
import { enqueue } from '../engine/enqueue.ts';
import { Pruner } from '../engine/effects/pruner.ts';
import { ValidationError } from '../engine/errors.ts';
import { Events } from '../engine/events.ts';
import { SeededRng } from '../engine/rng.ts';
import { Worker } from '../engine/worker/worker.ts';
import { freshDatabase } from './support/db.ts';

const { db } = await freshDatabase();
await db.query('CREATE TABLE test_invoices (id bigint GENERATED ALWAYS AS IDENTITY, key text NOT NULL, job_id bigint NOT NULL)');
const HOUR_MS = 3600_000;

const pruners: Pruner[] = [];
afterEach(async () => {
  await Promise.all(pruners.splice(0).map((p) => p.stop()));
  await db.query('TRUNCATE stampede.effect_keys, stampede.outbox, test_invoices');
});

const ages = (table: string, column: string) =>
  db.query(`SELECT round(extract(epoch FROM now() - ${column}) / 60)::int AS age_min FROM stampede.${table} ORDER BY 1`).then((r) => r.rows.map((x) => x.age_min));

describe('Pruner', () => {
  it('deletes effect keys and delivered outbox rows older than the retention, in batches; keeps newer, pending and dead rows', async () => {
    // 25 keys two hours old, 5 keys ten minutes old; retention one hour.
    await db.query(`INSERT INTO stampede.effect_keys (key, job_id, applied_at)
                    SELECT 'old:' || g, g, now() - interval '2 hours' FROM generate_series(1, 25) g
                    UNION ALL SELECT 'new:' || g, g, now() - interval '10 minutes' FROM generate_series(1, 5) g`);
    // Outbox: 12 delivered long ago, 3 delivered recently, 2 pending and 2 dead just as old.
    await db.query(`INSERT INTO stampede.outbox (topic, key, payload, state, delivered_at, dead_at, created_at)
                    SELECT 'email', 'd-old:' || g, '{}'::jsonb, 'delivered'::stampede.outbox_state, now() - interval '3 hours', NULL::timestamptz, now() - interval '3 hours' FROM generate_series(1, 12) g
                    UNION ALL SELECT 'email', 'd-new:' || g, '{}', 'delivered', now() - interval '5 minutes', NULL, now() - interval '3 hours' FROM generate_series(1, 3) g
                    UNION ALL SELECT 'email', 'p-old:' || g, '{}', 'pending', NULL, NULL, now() - interval '3 hours' FROM generate_series(1, 2) g
                    UNION ALL SELECT 'email', 'x-old:' || g, '{}', 'dead', NULL, now() - interval '3 hours', now() - interval '3 hours' FROM generate_series(1, 2) g`);
    const events = new Events();
    const pruned: unknown[] = [];
    events.on('effects:pruned', (e) => pruned.push(e));
    const pruner = new Pruner({ db, retentionMs: HOUR_MS, batchSize: 7, events });
    expect(await pruner.runOnce()).toEqual({ effectKeys: 25, outboxRows: 12 }); // 4 and 2 batches of at most 7
    expect(await ages('effect_keys', 'applied_at')).toEqual(Array(5).fill(10));
    const left = (await db.query(`SELECT state::text, count(*)::int AS n FROM stampede.outbox GROUP BY 1 ORDER BY 1`)).rows;
    expect(left).toEqual([
      { state: 'dead', n: 2 },
      { state: 'delivered', n: 3 },
      { state: 'pending', n: 2 },
    ]);
    expect(await pruner.runOnce()).toEqual({ effectKeys: 0, outboxRows: 0 });
    expect(pruned).toEqual([{ effectKeys: 25, outboxRows: 12 }]);
  });

  it('the trade-off: a replay within the retention is a no-op; the same replay after its key was pruned applies the effect again', async () => {
    const applied: boolean[] = [];
    const events = new Events();
    const worker = new Worker({
      db,
      events,
      rng: new SeededRng(3),
      listen: false,
      rescue: false,
      handlers: {
        invoice: async (_p, ctx) => {
          const r = await ctx.effectOnce((tx) => tx.query('INSERT INTO test_invoices (key, job_id) VALUES ($1, $2)', [ctx.job.idempotencyKey, ctx.job.id]));
          applied.push(r.applied);
        },
      },
    });
    // The upstream sends invoice:42; later it sends it again, after the first job row was archived away.
    const send = async () => {
      await db.query(`DELETE FROM stampede.jobs WHERE idempotency_key = 'invoice:42'`); // what an archiver does to finished jobs
      const job = await enqueue(db, 'invoice', {}, { idempotencyKey: 'invoice:42' });
      const done = events.waitFor('job:completed', (e) => e.jobId === job.id);
      expect(await worker.runOnce()).toBe(1);
      await done;
    };
    const invoices = async () => (await db.query('SELECT count(*)::int AS n FROM test_invoices')).rows[0].n;
    await send();
    await send();
    expect(applied).toEqual([true, false]);
    expect(await invoices()).toBe(1);
    // Two hours pass; the pruner (retention one hour) forgets the key. The same request now applies again.
    await db.query(`UPDATE stampede.effect_keys SET applied_at = now() - interval '2 hours'`);
    expect(await new Pruner({ db, retentionMs: HOUR_MS }).runOnce()).toEqual({ effectKeys: 1, outboxRows: 0 });
    await send();
    expect(applied).toEqual([true, false, true]);
    expect(await invoices()).toBe(2);
    await worker.stop(0);
  });

  it('refuses bad options naming the field; start() and stop() are idempotent', async () => {
    expect(() => new Pruner({ db, retentionMs: 0 })).toThrow(ValidationError);
    expect(() => new Pruner({ db, retentionMs: 0 })).toThrow('retentionMs: 0 is not an integer in [1, ');
    expect(() => new Pruner({ db, batchSize: 1.5 })).toThrow('batchSize: 1.5 is not an integer in [1, ');
    await db.query(`INSERT INTO stampede.effect_keys (key, job_id, applied_at) VALUES ('stale', 1, now() - interval '2 hours')`);
    const events = new Events();
    const pruned = events.waitFor('effects:pruned');
    const pruner = new Pruner({ db, retentionMs: HOUR_MS, intervalMs: 60_000, events });
    pruners.push(pruner);
    pruner.start();
    pruner.start();
    expect(await pruned).toEqual({ effectKeys: 1, outboxRows: 0 });
    await pruner.stop();
    await pruner.stop();
  });
});
