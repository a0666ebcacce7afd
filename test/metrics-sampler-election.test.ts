import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock.ts';
import { Db } from '../engine/db.ts';
import { createLogger } from '../engine/log.ts';
import { QueueStateSampler } from '../engine/metrics/queue-state-sampler.ts';
import { readSharedRound } from '../engine/metrics/sampler-election.ts';
import { freshDatabase } from './support/db.ts';
import { until } from './support/wait.ts';

const { db, url } = await freshDatabase();
const quiet = createLogger('test', 'silent');
const opened: { db: Db; sampler: QueueStateSampler }[] = [];

afterEach(async () => {
  for (const o of opened.splice(0)) {
    await o.sampler.stop();
    await o.db.close();
  }
});

/** A sampler in the election, with its own pool: what one worker process started with --sample-queue-state runs. */
function electingSampler(id: string): QueueStateSampler {
  const own = new Db({ connectionString: url, maxConnections: 2 });
  const sampler = new QueueStateSampler(own, systemClock, null, { intervalMs: 100, elect: true, samplerId: id }, quiet);
  opened.push({ db: own, sampler });
  return sampler;
}

async function roundNo(): Promise<number> {
  return (await readSharedRound(db, 60_000))?.roundNo ?? 0;
}

describe('one queue-state sampler per database', () => {
  it('three electing samplers: one runs the rounds, the others serve its figures; when it stops, another takes over', async () => {
    await db.query(`INSERT INTO stampede.jobs (queue, run_at) SELECT 'mail', now() - interval '5 s' FROM generate_series(1, 40)`);
    const samplers = ['a', 'b', 'c'].map(electingSampler);
    for (const s of samplers) s.start();
    await until('ten shared rounds, each sampler serving one', async () => (await roundNo()) >= 10 && samplers.every((s) => s.latest !== null));

    const leaders = samplers.filter((s) => s.role === 'leader');
    expect(leaders).toHaveLength(1);
    const [leader] = leaders;
    const followers = samplers.filter((s) => s !== leader);
    // N samplers, one round per interval: only the leader ran any, and every round it ran is the one the table counts.
    expect(followers.map((s) => s.roundsRun)).toEqual([0, 0]);
    const written = await roundNo();
    expect(leader.roundsRun).toBeGreaterThanOrEqual(written);
    for (const f of followers) {
      expect(f.latest).toMatchObject({ source: 'shared', leader: leader.config.samplerId, depthByQueue: { mail: 40 } });
    }

    await opened.find((o) => o.sampler === leader)!.sampler.stop();
    const next = await until('a follower to take over', () => followers.find((s) => s.role === 'leader'));
    const from = await roundNo();
    await until('the new leader to write rounds', async () => (await roundNo()) >= from + 3);
    expect(next.roundsRun).toBeGreaterThanOrEqual(3);
    expect(followers.filter((s) => s !== next).map((s) => s.roundsRun)).toEqual([0]);
    expect((await readSharedRound(db, 60_000))!.leader).toBe(next.config.samplerId);
  });

  it('a follower with no fresh shared round says so and keeps its previous figures', async () => {
    const leader = electingSampler('holder');
    await leader.runOnce(); // takes the lock and writes a round
    const follower = electingSampler('late');
    const served = await follower.runOnce();
    expect(served.source).toBe('shared');
    // The leader stops writing but keeps the lock (its connection is open): the row goes stale after two intervals.
    await until('the shared round to be older than two intervals', async () => (await readSharedRound(db, 200)) === null);
    await expect(follower.runOnce()).rejects.toThrow('no shared queue-state round younger than 200 ms');
    expect(follower.latest).toBe(served);
  });
});
