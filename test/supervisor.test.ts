import { afterEach, describe, expect, it } from 'vitest';
import { enqueue, enqueueMany } from '../engine/enqueue.ts';
import { Events, type EngineEvents } from '../engine/events.ts';
import { ProcessSupervisor } from '../engine/supervisor/supervisor.ts';
import { restartDecision } from '../engine/supervisor/restart-policy.ts';
import { freshDatabase } from './support/db.ts';
import { countByState, jobRow } from './support/jobs.ts';
import { until } from './support/wait.ts';
import { spawnWorker } from './support/worker-process.ts';

describe('restart policy', () => {
  const policy = { baseMs: 500, capMs: 30_000, stableMs: 10_000 };
  it('backs off exponentially on a crash loop, capped', () => {
    let crashes = 0;
    const delays: number[] = [];
    for (let i = 0; i < 9; i++) {
      const d = restartDecision(crashes, 100, policy);
      crashes = d.crashes;
      delays.push(d.delayMs);
    }
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });
  it('starts over after a stable run', () => {
    expect(restartDecision(6, 10_000, policy)).toEqual({ crashes: 1, delayMs: 500 });
  });
});

describe('a poison pill among healthy jobs, workers as real supervised processes', () => {
  const supervisors: ProcessSupervisor[] = [];
  afterEach(async () => {
    await Promise.all(supervisors.splice(0).map((s) => s.stop(1000)));
  });

  it('is dead-lettered within its crash budget, the supervisor restarts the fleet, and the lane keeps moving', async () => {
    const { db, url } = await freshDatabase();
    // The poison is due first, so it is claimed in a worker's first batch, beside healthy jobs it will take down with it.
    const poison = await enqueue(db, 'lane', { poison: true }, { maxAttempts: 6, runAt: new Date('2000-01-01') });
    await enqueueMany(db, Array.from({ length: 300 }, (_, i) => ({ queue: 'lane', payload: { ms: 50, i } })));
    const events = new Events();
    const exits: EngineEvents['process:exited'][] = [];
    events.on('process:exited', (e) => exits.push(e));
    const completedAt: number[] = [];
    const supervisor = new ProcessSupervisor({
      processes: 3,
      restart: { baseMs: 100, capMs: 1000, stableMs: 5000 },
      events,
      spawn: (slot) => {
        const p = spawnWorker(url, ['--lease-ms', '1000', '--heartbeat-ms', '250', '--max-crashes', '2', '--concurrency', '4', '--worker-id', `slot${slot}`]);
        p.events.on('job:completed', () => completedAt.push(Date.now()));
        return p;
      },
    });
    supervisors.push(supervisor);
    supervisor.start();
    await until('poison dead', async () => (await jobRow(db, poison.id)).state === 'dead', 30_000);
    await until('healthy jobs done', async () => (await countByState(db, 'lane')).done === 300, 30_000);
    const row = await jobRow(db, poison.id);
    expect(row.crash_count).toBe(2);
    expect(row.attempts).toBe(2);
    // The fault really happened: the poison killed two worker processes, and both were restarted.
    const killed = exits.filter((e) => e.signal === 'SIGKILL');
    expect(killed).toHaveLength(2);
    expect(killed.every((e) => e.restartInMs !== null)).toBe(true);
    // Innocent jobs shared a process with the poison when it died (they became suspects), ran alone, and completed.
    const innocents = (
      await db.query("SELECT count(*)::int AS n FROM stampede.jobs WHERE queue = 'lane' AND crash_count > 0 AND state = 'done'")
    ).rows[0].n;
    expect(innocents).toBeGreaterThan(0);
    expect(await countByState(db, 'lane')).toEqual({ done: 300, dead: 1 });
    // The lane kept moving while the poison was loose: healthy jobs completed between its first claim and its death.
    const { claimed_at, died_at } = (
      await db.query(
        `SELECT (SELECT min((e->>'at')::timestamptz) FROM jsonb_array_elements(j.errors) e) AS claimed_at, d.died_at
           FROM stampede.jobs j JOIN stampede.dead_letters d ON d.job_id = j.id WHERE j.id = $1`,
        [poison.id],
      )
    ).rows[0];
    const during = completedAt.filter((t) => t >= claimed_at.getTime() && t <= died_at.getTime()).length;
    expect(during).toBeGreaterThan(0);
    console.log(`poison loose for ${died_at - claimed_at} ms after its first crash; ${during} healthy jobs completed meanwhile`);
  });
});
