// Negative control for effects-once.test.ts: the same plan and the same
// check, with workers running the dedup-outside-tx mutant (the dedup key is
// written in its own commit after the effect). The check must find
// duplicated effects, so it is known to catch them.
import { describe, expect, it } from 'vitest';
import { EFFECT_TABLES } from './fixtures/effect-handlers.ts';
import { checkOneEffectPerJob, PLAN, runEveryJobTwice, SEED } from './fixtures/effect-fleet.ts';
import { freshDatabase } from './support/db.ts';

const { db, url } = await freshDatabase();
await db.query(EFFECT_TABLES);

describe('negative control: dedup-outside-tx', () => {
  it('the same run with the key written after the effect, in a separate commit, double-applies', async () => {
    const run = await runEveryJobTwice(db, url, { plan: PLAN, seed: SEED, workers: 3, leaseMs: 600, mutant: 'dedup-outside-tx' });
    const check = checkOneEffectPerJob(run);
    // Killed between the effect's commit and the key's: the replay applies it again.
    // Two overlapping deliveries: both look before either writes the key.
    const expected = run.jobs.filter((j) => j.first === 'after-commit' || j.first === 'overlap').map((j) => j.key);
    expect(expected.length).toBeGreaterThan(0);
    expect(check.duplicated).toEqual(expect.arrayContaining(expected));
    for (const key of expected) expect(run.effects.get(key)!.length).toBeGreaterThanOrEqual(2);
    expect(check.missing).toEqual([]);
  });
});
