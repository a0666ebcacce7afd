import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { deadLetterJob, listAudit, redriveDeadLetters, retryJob } from '../engine/control/index.ts';
import { DEAD_LETTER_CODES, listDeadLetters, type DeadLetterCode } from '../engine/dead-letters.ts';
import { enqueue } from '../engine/enqueue.ts';
import { Events, type EngineEvents } from '../engine/events.ts';
import * as engine from '../engine/index.ts';
import { migrate, readMigrations } from '../engine/migrator.ts';
import { SeededRng } from '../engine/rng.ts';
import { LeaseRescuer } from '../engine/worker/rescuer.ts';
import { Worker } from '../engine/worker/worker.ts';
import { emptyDatabase, freshDatabase } from './support/db.ts';
import { jobRow } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { db } = await freshDatabase();
const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(0)));
});

const ops = { by: 'alice', reason: 'incident 42' };

/** Every job:dead an events bus carries, for the code each path emits. */
function deaths(events: Events): EngineEvents['job:dead'][] {
  const seen: EngineEvents['job:dead'][] = [];
  events.on('job:dead', (e) => seen.push(e));
  return seen;
}

async function deadLetterOf(jobId: number) {
  return (await db.query('SELECT code, reason FROM stampede.dead_letters WHERE job_id = $1', [jobId])).rows[0] as { code: DeadLetterCode; reason: string };
}

/** A job claimed by `owner` (by default a holder that never said it was alive: a crash), its lease run out, `attempts` of `maxAttempts` spent. */
async function expiredClaim(queue: string, attempts: number, maxAttempts: number, owner = 'ghost'): Promise<number> {
  const job = await enqueue(db, queue, {}, { maxAttempts });
  await db.query(
    `UPDATE stampede.jobs SET state = 'claimed', attempts = $2, lease_owner = $3, lease_token = gen_random_uuid(),
            lease_expires_at = now() - interval '1 s' WHERE id = $1`,
    [job.id, attempts, owner],
  );
  return job.id;
}

describe('each path that dead-letters writes its code', () => {
  it('the handler throws at its budget: attempts_exhausted; runs past its timeout at its budget: timeout', async () => {
    const events = new Events();
    const seen = deaths(events);
    const threw = await enqueue(db, 'dl-throws', {}, { maxAttempts: 1 });
    const slow = await enqueue(db, 'dl-slow', {}, { maxAttempts: 1 });
    const w = new Worker({
      db,
      events,
      rng: new SeededRng(5),
      pollMs: 20,
      timeoutMs: 100,
      handlers: {
        'dl-throws': () => { throw new TypeError('bad field'); },
        'dl-slow': (_p, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', resolve)),
      },
    });
    workers.push(w);
    w.start();
    await until('both dead', async () => seen.length === 2);
    expect(await deadLetterOf(threw.id)).toEqual({ code: 'attempts_exhausted', reason: 'attempts exhausted: TypeError: bad field' });
    expect(await deadLetterOf(slow.id)).toEqual({ code: 'timeout', reason: 'attempts exhausted: JobTimeoutError: handler exceeded its timeout of 100 ms' });
    expect(seen.find((e) => e.jobId === threw.id)).toMatchObject({ code: 'attempts_exhausted', reason: 'attempts exhausted: TypeError: bad field' });
    expect(seen.find((e) => e.jobId === slow.id)?.code).toBe('timeout');
  });

  it('the rescuer: a crash at the budget is lease_expired; the maxCrashes-th crash below it is crash_loop', async () => {
    const events = new Events();
    const seen = deaths(events);
    const spent = await expiredClaim('dl-rescue', 3, 3);
    const looping = await expiredClaim('dl-rescue', 1, 3);
    await new LeaseRescuer({ db, events, maxCrashes: 1 }).runOnce();
    expect(await deadLetterOf(spent)).toEqual({ code: 'lease_expired', reason: 'attempts exhausted: lease expired; worker presumed dead' });
    expect(await deadLetterOf(looping)).toEqual({ code: 'crash_loop', reason: 'crashed its worker 1 times' });
    expect(Object.fromEntries(seen.map((e) => [e.jobId, e.code]))).toEqual({ [spent]: 'lease_expired', [looping]: 'crash_loop' });
  });

  it("the rescuer: a lease run out on the budget's last attempt is dead, whatever maxCrashes and whether its holder lives; one attempt short, it runs again", async () => {
    // A live holder that lost its lease: seen alive after the lease ran out, started long before it.
    await db.query(
      `INSERT INTO stampede.workers (worker_id, started_at, last_seen_at, expires_at, ttl_ms)
       VALUES ('alive-holder', now() - interval '1 h', now(), now() + interval '3 s', 3000)`,
    );
    const deadHolder = await expiredClaim('dl-budget', 3, 3);
    const liveHolder = await expiredClaim('dl-budget', 3, 3, 'alive-holder');
    const short = await expiredClaim('dl-budget', 2, 3);
    await new LeaseRescuer({ db, events: new Events(), maxCrashes: 10 }).runOnce();
    expect(await deadLetterOf(deadHolder)).toEqual({ code: 'lease_expired', reason: 'attempts exhausted: lease expired; worker presumed dead' });
    expect(await deadLetterOf(liveHolder)).toEqual({ code: 'lease_expired', reason: 'attempts exhausted: lease expired while its worker was alive' });
    expect(await jobRow(db, short)).toMatchObject({ state: 'failed', attempts: 2, crash_count: 1 });
  });

  it('by hand: operator, with who and why as its message', async () => {
    const job = await enqueue(db, 'dl-hand', {});
    await deadLetterJob(db, job.id, ops);
    expect(await deadLetterOf(job.id)).toEqual({ code: 'operator', reason: 'dead-lettered by alice: incident 42' });
    expect((await listDeadLetters(db, { queue: 'dl-hand' }))[0]).toMatchObject({ jobId: job.id, code: 'operator' });
  });

  it('refuses a row for a job that is not dead, and a code outside the set', async () => {
    const job = await enqueue(db, 'dl-refused', {});
    await expect(db.query('SELECT stampede.dead_letter(j, $2) FROM stampede.jobs j WHERE id = $1', [job.id, 'operator'])).rejects.toThrow(/job \d+ is pending, expected dead/);
    await db.query(`UPDATE stampede.jobs SET state = 'dead', finished_at = now(), last_error = 'x' WHERE id = $1`, [job.id]);
    await expect(db.query('SELECT stampede.dead_letter(j, $2) FROM stampede.jobs j WHERE id = $1', [job.id, 'poison'])).rejects.toThrow(/dead_letters_code_check/);
  });

  it('the code set is the one of the CHECK constraint, and no SQL but stampede.dead_letter writes a dead letter', async () => {
    const check = (await db.query(`SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'dead_letters_code_check'`)).rows[0].def as string;
    expect([...check.matchAll(/'([a-z_]+)'::text/g)].map((m) => m[1]).sort()).toEqual([...DEAD_LETTER_CODES].sort());
    const sqlFiles = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sqlFiles(`${dir}/${e.name}`) : e.name.endsWith('.sql') ? [`${dir}/${e.name}`] : []));
    const writers = sqlFiles('engine').filter((f) => /INSERT INTO stampede\.dead_letters/i.test(readFileSync(f, 'utf8')));
    expect(writers).toEqual([]);
    const removers = sqlFiles('engine').filter((f) => /DELETE FROM stampede\.dead_letters/i.test(readFileSync(f, 'utf8')));
    expect(removers).toEqual(['engine/control/control.sql']); // RedriveMany, the one redrive
  });
});

describe('every redrive door is the one audited redrive', () => {
  async function deadByHand(queue: string): Promise<number> {
    const job = await enqueue(db, queue, {});
    await deadLetterJob(db, job.id, ops);
    return job.id;
  }

  it('retryJob of a dead job: fresh budget, its audit row names the dead letter', async () => {
    const id = await deadByHand('rd-one');
    await retryJob(db, id, { by: 'bob', reason: 'fixed' });
    expect(await jobRow(db, id)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(await listAudit(db, { jobId: id, limit: 1 })).toMatchObject([
      { actor: 'bob', reason: 'fixed', verb: 'retry', detail: { from: 'dead', deadCode: 'operator', deadReason: 'dead-lettered by alice: incident 42' } },
    ]);
  });

  it('redriveDeadLetters by code: only that code moves, one audit row each', async () => {
    const byHand = await deadByHand('rd-bulk');
    const looping = await expiredClaim('rd-bulk', 1, 5);
    await new LeaseRescuer({ db, maxCrashes: 1 }).runOnce();
    expect(await redriveDeadLetters(db, { queue: 'rd-bulk', code: 'crash_loop' }, { by: 'bob', reason: 'poison fixed' })).toEqual([looping]);
    expect((await jobRow(db, byHand)).state).toBe('dead');
    expect(await listAudit(db, { jobId: looping, limit: 1 })).toMatchObject([{ verb: 'redrive', detail: { deadCode: 'crash_loop' } }]);
    await expect(redriveDeadLetters(db, { queue: 'rd-bulk', code: 'poison' as DeadLetterCode }, ops)).rejects.toThrow(/^code: "poison" is not one of attempts_exhausted, /);
  });

  it('the package exports no unaudited redrive', () => {
    expect(Object.keys(engine)).not.toContain('redrive');
  });
});

describe('migration 0018 codes the dead letters written before it', () => {
  it('from the messages the three statements wrote', async () => {
    const { db: old } = await emptyDatabase('stampede_dlcode');
    const all = readMigrations();
    await migrate(old, all.filter((m) => m.name < '0018'));
    const reasons = {
      'attempts exhausted: TypeError: bad field': 'attempts_exhausted',
      'attempts exhausted: JobTimeoutError: handler exceeded its timeout of 100 ms': 'timeout',
      'attempts exhausted: lease expired; worker presumed dead': 'lease_expired',
      'attempts exhausted: lease expired while its worker was alive': 'lease_expired',
      'crashed its worker 2 times': 'crash_loop',
      'dead-lettered by alice: incident 42': 'operator',
    };
    for (const reason of Object.keys(reasons)) {
      await old.query(
        `WITH j AS (INSERT INTO stampede.jobs (queue, payload, state, finished_at) VALUES ('bf', '{}', 'dead', now()) RETURNING id, queue, payload, attempts, errors)
         INSERT INTO stampede.dead_letters (job_id, queue, payload, attempts, reason, errors) SELECT id, queue, payload, attempts, $1, errors FROM j`,
        [reason],
      );
    }
    await migrate(old);
    const rows = (await old.query('SELECT reason, code FROM stampede.dead_letters')).rows;
    expect(Object.fromEntries(rows.map((r) => [r.reason, r.code]))).toEqual(reasons);
  });
});
