// Exactly one effect per job, although every job is delivered at least twice:
// once more after it completed (forced), concurrently from two workers (an
// expired lease, heartbeats off), and with worker processes SIGKILLed before
// effectOnce's transaction, inside it, and after its COMMIT but before the
// worker learns of it. Real Postgres, real worker processes.
// The negative control (the dedup-outside-tx mutant) is effects-once-mutant.test.ts.
import { describe, expect, it } from 'vitest';
import { EFFECT_TABLES, KILL_POINTS } from './fixtures/effect-handlers.ts';
import { checkOneEffectPerJob, PLAN, runEveryJobTwice, SEED } from './fixtures/effect-fleet.ts';
import { freshDatabase } from './support/db.ts';


const { db, url } = await freshDatabase();
await db.query(EFFECT_TABLES);

describe('effectOnce under duplicate delivery and crashes', () => {
  it(`every job delivered at least twice, ${PLAN.length} jobs, seed ${SEED}: exactly one effect per job`, async () => {
    const run = await runEveryJobTwice(db, url, { plan: PLAN, seed: SEED, workers: 3, leaseMs: 600 });
    const check = checkOneEffectPerJob(run);
    expect(check).toEqual({ duplicated: [], missing: [], unexpected: [] });
    for (const job of run.jobs) {
      expect(job.state).toBe('done');
      expect(run.effects.get(job.key)).toHaveLength(1);
    }
    // The dedup store holds exactly the jobs' keys: the caller's where given, else job:<id>.
    expect(run.effectKeys).toEqual(new Set(run.jobs.map((j) => j.key)));
    expect([...run.effectKeys].filter((k) => k.startsWith('order:')).length).toBe(Math.ceil(PLAN.length / 2));

    // Not vacuous: duplicates really happened.
    for (const job of run.jobs) expect(run.deliveriesTotal.get(job.id)!).toBeGreaterThanOrEqual(2);
    const total = [...run.deliveriesTotal.values()].reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(2 * PLAN.length + PLAN.filter((p) => p !== 'plain' && p !== 'after-commit').length);
    // ...and every planned fault fired exactly where it was planned: kills on attempt 1, each one a SIGKILLed process.
    const planned = run.jobs.filter((j) => j.first !== 'plain').map((j) => ({ jobId: j.id, attempt: 1, point: j.first }));
    expect(run.faults).toEqual(expect.arrayContaining(planned));
    expect(run.faults).toHaveLength(planned.length);
    expect(run.killed).toBe(planned.filter((p) => (KILL_POINTS as readonly string[]).includes(p.point)).length);

    for (const job of run.jobs) {
      const [effect] = run.effects.get(job.key)!;
      if (job.first === 'in-tx' || job.first === 'overlap') {
        // The first attempt's effect write was rolled back (process died / fence refused it); a later one applied.
        expect(effect.attempt, `${job.first} job ${job.id}`).toBeGreaterThan(1);
      }
      if (job.first === 'after-commit') {
        // The first attempt's commit held: its effect is the one, and the job was never redelivered until forced.
        expect(effect.attempt).toBe(1);
        expect(run.deliveriesBefore.get(job.id)).toBe(1);
      }
      if (job.first === 'overlap') expect(run.deliveriesBefore.get(job.id)).toBeGreaterThanOrEqual(2);
    }
  });
});
