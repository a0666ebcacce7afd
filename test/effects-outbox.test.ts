// The outbox, end to end with real processes: jobs record an email intent
// inside effectOnce while being delivered twice and killed mid-handler; then
// relay processes deliver the outbox to a real HTTP receiver on 127.0.0.1
// that drops responses, fails requests, and SIGKILLs the relay in the middle
// of a request. Every intent is requested at least once and applied exactly
// once (the receiver deduplicates by the Idempotency-Key header), and some
// are provably requested more than once.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { listOutbox, outboxDepth } from '../engine/effects/outbox.ts';
import { SeededRng } from '../engine/rng.ts';
import { EFFECT_TABLES } from './fixtures/effect-handlers.ts';
import { checkOneEffectPerJob, Fleet, planFirstAttempts, runEveryJobTwice, SEED, spawnRelay } from './fixtures/effect-fleet.ts';
import { freshDatabase } from './support/db.ts';
import { until } from './support/wait.ts';

type Behaviour = 'ok' | 'drop-first' | 'fail-first' | 'kill-relay';
interface Received {
  key: string;
  n: number;
  pid: number;
  attempt: number;
  outcome: 'applied' | 'duplicate' | 'dropped' | '503' | 'relay-killed';
}

/**
 * A receiver with an idempotency store, as a payment or email API has: it
 * applies each key once and answers a repeated key with the first result.
 * It records every request it gets, and misbehaves on a key's first request
 * as `behaviour(n)` says.
 */
class Receiver {
  readonly requests: Received[] = [];
  readonly applied = new Map<string, number>();
  readonly server = createServer((req, res) => void this.handle(req, res));
  killRelay: (pid: number) => boolean = () => false;

  constructor(private readonly behaviour: (n: number) => Behaviour) {}

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += chunk;
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string' || !key) {
      res.writeHead(400).end('Idempotency-Key header required');
      return;
    }
    const { n } = JSON.parse(body) as { n: number };
    const first = !this.requests.some((r) => r.key === key);
    const seen = { key, n, pid: Number(req.headers['x-relay-pid']), attempt: Number(req.headers['x-attempt']) };
    const behaviour = first ? this.behaviour(n) : 'ok';
    if (behaviour === 'fail-first') {
      this.requests.push({ ...seen, outcome: '503' });
      res.writeHead(503).end('try later');
      return;
    }
    const duplicate = this.applied.has(key);
    if (!duplicate) this.applied.set(key, (this.applied.get(key) ?? 0) + 1);
    if (behaviour === 'drop-first') {
      this.requests.push({ ...seen, outcome: 'dropped' });
      req.socket.destroy(); // applied, but the relay never hears so
      return;
    }
    if (behaviour === 'kill-relay') {
      this.requests.push({ ...seen, outcome: 'relay-killed' });
      this.killRelay(seen.pid); // applied; the relay dies before it can mark the row delivered
      req.socket.destroy();
      return;
    }
    this.requests.push({ ...seen, outcome: duplicate ? 'duplicate' : 'applied' });
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, duplicate }));
  }
}

const { db, url } = await freshDatabase();
await db.query(EFFECT_TABLES);

const JOB_PLAN = planFirstAttempts(SEED + 1, { plain: 5, overlap: 1, 'after-commit': 1 });
const RECEIVER_PLAN: Behaviour[] = (() => {
  const plan: Behaviour[] = ['ok', 'ok', 'ok', 'drop-first', 'drop-first', 'fail-first', 'kill-relay'];
  const rng = new SeededRng(`${SEED}/receiver`);
  for (let i = plan.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [plan[i], plan[j]] = [plan[j], plan[i]];
  }
  return plan;
})();

describe('outbox: at-least-once delivery, applied once by key', () => {
  const receiver = new Receiver((n) => RECEIVER_PLAN[n]);
  afterAll(() => new Promise<void>((resolve) => receiver.server.close(() => resolve())));

  it('jobs delivered twice and killed record one intent each; relays killed mid-request still get each applied exactly once', async () => {
    // 1. The jobs: every one delivered at least twice, some killed; one intent per job must come out.
    // The relays run from the start, against a receiver that misbehaves on first requests.
    const receiverUrl = await receiver.listen();
    const relays = new Fleet(2, (i) =>
      spawnRelay(url, receiverUrl, [
        '--lease-ms', '1000', '--delivery-timeout-ms', '600', '--backoff-base-ms', '100', '--backoff-cap-ms', '400',
        '--poll-ms', '100', '--batch-size', '3', '--seed', `${SEED}/${i}`, '--relay-id', `relay${i}`,
      ]),
    );
    receiver.killRelay = (pid) => relays.kill(pid);
    let killed: number;
    let intents: { key: string; payload: { n: number; jobId: number } }[];
    try {
      // The jobs: every one delivered at least twice, some killed; exactly one intent per job must come out.
      const run = await runEveryJobTwice(db, url, { plan: JOB_PLAN, seed: SEED + 1, workers: 2, leaseMs: 600, outbox: true });
      expect(checkOneEffectPerJob(run)).toEqual({ duplicated: [], missing: [], unexpected: [] });
      for (const job of run.jobs) expect(run.deliveriesTotal.get(job.id)!).toBeGreaterThanOrEqual(2);
      intents = (await db.query(`SELECT key, payload FROM stampede.outbox WHERE topic = 'email' ORDER BY id`)).rows;
      expect(intents.map((r) => r.payload.jobId).sort()).toEqual(run.jobs.map((j) => j.id).sort());
      await until('every intent delivered', async () => (await outboxDepth(db)).pending === 0, 30_000, 100);
      killed = relays.killed;
    } finally {
      await relays.stop();
    }

    if (process.env.EFFECTS_TIMING) console.log(`${receiver.requests.length} requests for ${intents.length} intents: ${receiver.requests.map((r) => r.outcome).join(' ')}`);
    const keys = intents.map((r) => r.key);
    const requested = (key: string) => receiver.requests.filter((r) => r.key === key);
    for (const key of keys) {
      expect(requested(key).length, key).toBeGreaterThanOrEqual(1); // at least once
      expect(receiver.applied.get(key), key).toBe(1); // exactly once
    }
    expect(new Set(receiver.requests.map((r) => r.key))).toEqual(new Set(keys)); // nothing but our keys
    expect((await listOutbox(db, { state: 'delivered' })).length).toBe(keys.length);
    expect((await outboxDepth(db)).dead).toBe(0);

    // Not vacuous: every misbehaving first request led to another request of the same key.
    const byN = new Map(intents.map((r) => [r.payload.n as number, r.key as string]));
    for (const [n, behaviour] of RECEIVER_PLAN.entries()) {
      if (behaviour === 'ok') continue;
      expect(requested(byN.get(n)!).length, `${behaviour} n=${n}`).toBeGreaterThanOrEqual(2);
    }
    expect(receiver.requests.filter((r) => r.outcome === 'duplicate').length).toBeGreaterThanOrEqual(RECEIVER_PLAN.filter((b) => b === 'drop-first' || b === 'kill-relay').length); // applied, then asked again
    expect(killed).toBe(RECEIVER_PLAN.filter((b) => b === 'kill-relay').length);
    // The relay that was killed never reported; the claim after its lease wrote so into the row's history.
    const rows = await listOutbox(db, { state: 'delivered' });
    for (const [n, behaviour] of RECEIVER_PLAN.entries()) {
      if (behaviour !== 'kill-relay') continue;
      const row = rows.find((r) => r.key === byN.get(n))!;
      expect(row.errors.some((e) => /did not report; its lease expired/.test(e.error))).toBe(true);
      expect(row.attempts).toBeGreaterThanOrEqual(2);
    }
  });

});
