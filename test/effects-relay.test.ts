// The outbox API and the relay in-process, against real Postgres: validation,
// SKIP LOCKED sharing between relays, full-jitter retries, the dead state,
// a relay that died after claiming, delivery timeouts and the token fence.
import { afterEach, describe, expect, it } from 'vitest';
import { listOutbox, outboxDepth, outboxQueries, recordIntent, redriveOutbox } from '../engine/effects/outbox.ts';
import { OutboxRelay, type OutboxRelayOptions } from '../engine/effects/relay.ts';
import { ValidationError } from '../engine/errors.ts';
import { Events } from '../engine/events.ts';
import { SeededRng } from '../engine/rng.ts';
import { checkOneEffectPerJob, type EffectRun } from './fixtures/effect-fleet.ts';
import { freshDatabase } from './support/db.ts';

const { db } = await freshDatabase({ maxConnections: 30 });
const relays: OutboxRelay[] = [];
afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
  await db.query('TRUNCATE stampede.outbox');
});

function relay(options: Partial<OutboxRelayOptions> & Pick<OutboxRelayOptions, 'deliver'>): OutboxRelay {
  const r = new OutboxRelay({ db, rng: new SeededRng(7), pollMs: 20, leaseMs: 30_000, deliveryTimeoutMs: 5_000, ...options });
  relays.push(r);
  return r;
}

async function intents(n: number, topic = 'email', extra: { maxAttempts?: number } = {}): Promise<string[]> {
  return db.transaction(async (tx) => {
    const keys: string[] = [];
    for (let i = 0; i < n; i++) keys.push((await recordIntent(tx, { topic, key: `${topic}:${i}`, payload: { i }, ...extra })).key);
    return keys;
  });
}

const refused = (fn: () => unknown, field: string) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe(field);
    return (err as Error).message;
  }
  throw new Error(`expected a ValidationError on ${field}`);
};

describe('recordIntent', () => {
  it('commits and rolls back with the caller transaction; a key already recorded inserts nothing', async () => {
    await expect(
      db.transaction(async (tx) => {
        await recordIntent(tx, { topic: 'email', key: 'k1', payload: { a: 1 } });
        throw new Error('effect failed');
      }),
    ).rejects.toThrow('effect failed');
    expect((await outboxDepth(db)).pending).toBe(0);
    const first = await recordIntent(db, { topic: 'email', key: 'k1', payload: { a: 1 } });
    const again = await recordIntent(db, { topic: 'email', key: 'k1', payload: { a: 2 } });
    expect(first.inserted).toBe(true);
    expect(again).toEqual({ id: first.id, key: 'k1', inserted: false });
    const drawn = await recordIntent(db, { topic: 'email', payload: {} });
    expect(drawn.key).toMatch(/^[0-9a-f-]{36}$/); // the database draws a key when none is given
    expect((await outboxDepth(db)).pending).toBe(2);
  });

  it('refuses bad input before writing, naming the field', async () => {
    await expect(recordIntent(db, { topic: 'no spaces', payload: {} })).rejects.toThrow('intent.topic: "no spaces" is not a queue name');
    await expect(recordIntent(db, { topic: 'email', key: '', payload: {} })).rejects.toThrow('intent.key: expected a non-empty string');
    await expect(recordIntent(db, { topic: 'email', payload: undefined })).rejects.toThrow('intent.payload: is undefined');
    await expect(recordIntent(db, { topic: 'email', payload: {}, maxAttempts: 0 })).rejects.toThrow('intent.maxAttempts: 0 is not an integer in [1, 1000]');
    await expect(listOutbox(db, { state: 'gone' as never })).rejects.toThrow('state: gone is not one of pending, delivered, dead');
    expect((await outboxDepth(db)).pending).toBe(0);
  });
});

describe('OutboxRelay', () => {
  it('refuses bad options, naming the field', () => {
    const deliver = () => {};
    refused(() => new OutboxRelay({ db } as never), 'deliver');
    expect(refused(() => new OutboxRelay({ db, deliver, leaseMs: 1000, deliveryTimeoutMs: 1000 }), 'deliveryTimeoutMs')).toContain('must be below leaseMs (1000)');
    refused(() => new OutboxRelay({ db, deliver, batchSize: 0 }), 'batchSize');
    refused(() => new OutboxRelay({ db, deliver, topics: ['ok', 'not ok'] }), 'topics[1]');
  });

  it('four relays on one outbox share it with SKIP LOCKED: each of 100 rows delivered exactly once, with its key', async () => {
    const keys = await intents(100);
    const deliveries: { key: string; idempotencyKey: string; relay: string }[] = [];
    const fleet = Array.from({ length: 4 }, (_, i) =>
      relay({
        relayId: `r${i}`,
        batchSize: 10,
        deliver: async (row, ctx) => {
          deliveries.push({ key: row.key, idempotencyKey: ctx.idempotencyKey, relay: ctx.relayId });
          await new Promise((r) => setImmediate(r)); // yield, so the relays' passes interleave
        },
      }),
    );
    const drain = async (r: OutboxRelay) => {
      while ((await r.runOnce()) > 0);
    };
    await Promise.all(fleet.map(drain));
    expect(deliveries.map((d) => d.key).sort()).toEqual([...keys].sort());
    expect(deliveries.every((d) => d.idempotencyKey === d.key)).toBe(true);
    expect(new Set(deliveries.map((d) => d.relay)).size).toBeGreaterThan(1);
    expect((await listOutbox(db, { state: 'delivered', limit: 1000 })).length).toBe(100);
  });

  it('retries after a full-jitter backoff (the worker policy): 20 failures spread over [0, ceiling], not one tick', async () => {
    await intents(20);
    const events = new Events();
    const failed: number[] = [];
    events.on('outbox:failed', (e) => failed.push(e.attempt));
    const r = relay({ batchSize: 20, backoffBaseMs: 60_000, backoffCapMs: 60_000, events, deliver: () => Promise.reject(new Error('503 from the mail API')) });
    expect(await r.runOnce()).toBe(20);
    expect(failed).toEqual(Array(20).fill(1));
    const rows = (await db.query(`SELECT extract(epoch FROM run_at - now()) * 1000 AS wait_ms, attempts, last_error, errors, state::text FROM stampede.outbox`)).rows;
    const waits = rows.map((x) => Number(x.wait_ms));
    for (const w of waits) expect(w).toBeGreaterThanOrEqual(-1000); // drawn in [0, 60 s], minus the statement gap
    for (const w of waits) expect(w).toBeLessThanOrEqual(60_000);
    expect(Math.max(...waits) - Math.min(...waits)).toBeGreaterThan(20_000); // lockstep retries would all wait 60 s
    expect(rows.every((x) => x.state === 'pending' && x.attempts === 1 && x.last_error === 'Error: 503 from the mail API' && x.errors.length === 1)).toBe(true);
    expect(await r.runOnce()).toBe(0); // nothing is due before its backoff
  });

  it('a spent attempt budget leaves the row dead and queryable; a redrive sends it again', async () => {
    const [key] = await intents(1, 'payment', { maxAttempts: 3 });
    const events = new Events();
    const dead = events.waitFor('outbox:dead');
    let broken = true;
    const r = relay({ backoffBaseMs: 0, backoffCapMs: 0, events, deliver: () => (broken ? Promise.reject(new Error('card processor down')) : undefined) });
    for (let i = 0; i < 3; i++) expect(await r.runOnce()).toBe(1);
    expect(await dead).toMatchObject({ key, attempts: 3, reason: 'attempts exhausted: Error: card processor down' });
    expect(await r.runOnce()).toBe(0);
    expect(await outboxDepth(db, 'payment')).toEqual({ pending: 0, dead: 1 });
    const [row] = await listOutbox(db, { state: 'dead', topic: 'payment' });
    expect(row).toMatchObject({ key, attempts: 3, lastError: 'Error: card processor down' });
    expect(row.errors.map((e) => e.attempt)).toEqual([1, 2, 3]);
    expect(await redriveOutbox(db, row.id)).toBe(true);
    expect(await redriveOutbox(db, row.id)).toBe(false);
    broken = false;
    expect(await r.runOnce()).toBe(1);
    expect(await outboxDepth(db, 'payment')).toEqual({ pending: 0, dead: 0 });
    expect((await listOutbox(db, { state: 'delivered' }))[0]).toMatchObject({ key, attempts: 1 });
  });

  it('a relay that died after its claim: the row is due again when the lease runs out, the history says so, and the budget still counts', async () => {
    await intents(1, 'email', { maxAttempts: 2 });
    // "Relay ghost" claims with a lease that lapses at once (0 ms) and dies without reporting.
    const ghost = await db.query(outboxQueries.ClaimIntents, [10, 0, 'ghost', null]);
    expect(ghost.rowCount).toBe(1);
    const delivered: number[] = [];
    const r = relay({ deliver: (row) => void delivered.push(row.attempts) });
    expect(await r.runOnce()).toBe(1);
    expect(delivered).toEqual([2]);
    const [row] = await listOutbox(db, { state: 'delivered' });
    expect(row.errors).toEqual([expect.objectContaining({ attempt: 1, error: 'relay ghost did not report; its lease expired' })]);
    // With the budget spent by ghosts alone, the claim declares the row dead instead of sending it a third time.
    await db.query('TRUNCATE stampede.outbox');
    await intents(1, 'email', { maxAttempts: 1 });
    await db.query(outboxQueries.ClaimIntents, [10, 0, 'ghost', null]);
    expect(await r.runOnce()).toBe(1);
    expect(delivered).toEqual([2]);
    const [gone] = await listOutbox(db, { state: 'dead' });
    expect(gone).toMatchObject({ attempts: 1, lastError: 'relay ghost did not report; its lease expired' });
  });

  it('a delivery that hangs past deliveryTimeoutMs is aborted and retried; a stale relay cannot reschedule a row another holds', async () => {
    await intents(1);
    let signal: AbortSignal | undefined;
    const r = relay({ leaseMs: 1000, deliveryTimeoutMs: 50, backoffBaseMs: 0, backoffCapMs: 0, deliver: (_row, ctx) => ((signal = ctx.signal), new Promise(() => {})) });
    expect(await r.runOnce()).toBe(1);
    expect(signal?.aborted).toBe(true);
    const [row] = await listOutbox(db, { state: 'pending' });
    expect(row.lastError).toBe('Error: delivery exceeded deliveryTimeoutMs (50 ms)');
    // A claim (token t1) whose lease lapses, then another relay delivers it: t1's failure report is refused.
    const stale = (await db.query(outboxQueries.ClaimIntents, [10, 0, 'stale', null])).rows[0];
    const ok = relay({ deliver: () => {} });
    expect(await ok.runOnce()).toBe(1);
    const late = await db.query(outboxQueries.FailDelivery, [stale.id, stale.lease_token, 'late failure', 0]);
    expect(late.rowCount).toBe(0);
    expect((await listOutbox(db, { state: 'delivered' }))[0].id).toBe(stale.id);
  });

  it('start() and stop() are idempotent; the loop delivers what is recorded while it runs', async () => {
    const events = new Events();
    const r = relay({ events, deliver: () => {} });
    r.start();
    r.start();
    const delivered = events.waitFor('outbox:delivered');
    const [key] = await intents(1);
    expect(await delivered).toMatchObject({ key, attempt: 1, relayId: r.id });
    await r.stop();
    await r.stop();
  });
});

describe('the exactly-once check itself', () => {
  const run = (effects: [string, number][]): EffectRun => ({
    jobs: [
      { id: 1, key: 'job:1', first: 'plain', state: 'done' },
      { id: 2, key: 'order:2', first: 'plain', state: 'done' },
    ],
    effects: new Map(effects.map(([k, n]) => [k, Array.from({ length: n }, (_, i) => ({ attempt: i + 1, jobId: 1 }))])),
    deliveriesBefore: new Map(),
    deliveriesTotal: new Map(),
    faults: [],
    killed: 0,
    effectKeys: new Set(),
  });
  it('passes one effect per job, flags a duplicate (key after the effect) and a missing one (key before the effect)', () => {
    expect(checkOneEffectPerJob(run([['job:1', 1], ['order:2', 1]]))).toEqual({ duplicated: [], missing: [], unexpected: [] });
    expect(checkOneEffectPerJob(run([['job:1', 2], ['order:2', 1]])).duplicated).toEqual(['job:1']);
    expect(checkOneEffectPerJob(run([['job:1', 1]])).missing).toEqual(['order:2']);
    expect(checkOneEffectPerJob(run([['job:1', 1], ['order:2', 1], ['job:9', 1]])).unexpected).toEqual(['job:9']);
  });
});
