import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock.ts';
import { Db } from '../engine/db.ts';
import { DashboardServer } from '../engine/dashboard/server.ts';
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
    const next = (await until('a follower to take over', () => followers.find((s) => s.role === 'leader')))!;
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

describe("the dashboard's queues page", () => {
  it("shows the elected sampler's fresh round, estimates marked ~, and runs its own round only when none is fresh", async () => {
    // A budget of 3 rows: 1 per queue per kind of count, so mail's 40 (and more) jobs are estimated.
    const own = new Db({ connectionString: url, maxConnections: 2 });
    const sampler = new QueueStateSampler(own, systemClock, null, { intervalMs: 100, elect: true, samplerId: 'worker-7', roundRowBudget: 3 }, quiet);
    opened.push({ db: own, sampler });
    await sampler.runOnce();
    const page = async (sharedRoundMaxAgeMs: number) => {
      const server = new DashboardServer(db, systemClock, { port: 0, sharedRoundMaxAgeMs }, createLogger('test:dashboard', 'silent'));
      await server.start();
      try {
        return await (await fetch(`http://127.0.0.1:${server.port}/queues`, { headers: { authorization: `Bearer ${server.accessToken}` } })).text();
      } finally {
        await server.stop();
      }
    };
    const shared = await page(60_000);
    expect(shared).toMatch(/data-field="round-source" data-source="shared" data-round-no="\d+" data-leader="worker-7" data-age-ms="\d+">Sampled [^<]* ago by the elected sampler worker-7 \(round \d+\) in \d+ ms/);
    expect(shared).toMatch(/<tr data-queue="mail">[\s\S]*?data-estimate="1" title="estimated[^"]*">~<\/span>\d+/);
    // Nothing is fresh within 0 ms: the page runs its own round, with the default budget, which counts mail exactly.
    const ownRound = await page(0);
    expect(ownRound).toContain('data-field="round-source" data-source="own">Sampled in');
    expect(ownRound).toContain('by this page');
    expect(ownRound).not.toContain('data-estimate');
  });
});
