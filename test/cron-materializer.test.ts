import { describe, expect, it } from 'vitest';
import { ManualClock, SkewedClock } from '../engine/clock.ts';
import { CronMaterializer, type CronMaterializerConfig } from '../engine/cron/materializer.ts';
import { occurrenceKey } from '../engine/cron/occurrences.ts';
import { addSchedule } from '../engine/cron/schedule.ts';
import type { Db } from '../engine/db.ts';
import { Events, type EngineEvents } from '../engine/events.ts';
import { createLogger } from '../engine/log.ts';
import { SeededRng } from '../engine/rng.ts';
import { freshDatabase } from './support/db.ts';

/**
 * Many materializer nodes against the real Postgres, with injected clocks.
 * A server's now() cannot be moved, so each node reads "database now" from
 * the shared base clock (the injectable dbNow); its own clock is the base
 * plus its skew.
 */

const { db } = await freshDatabase();
const MIN = 60_000;
const silent = createLogger('cron-test', 'silent');

interface Node {
  clock: SkewedClock;
  m: CronMaterializer;
  events: Events;
  materialized: EngineEvents['cron:materialized'][];
  refused: EngineEvents['cron:refused'][];
}

function makeNode(base: ManualClock, nodeId: string, skewMs: number, config: Partial<CronMaterializerConfig>): Node {
  const clock = new SkewedClock(base, skewMs);
  const events = new Events();
  const node: Node = { clock, events, materialized: [], refused: [], m: null! };
  events.on('cron:materialized', (e) => node.materialized.push(e));
  events.on('cron:refused', (e) => node.refused.push(e));
  node.m = new CronMaterializer({ db, nodeId, clock, events, dbNow: async () => base.now(), log: silent, ...config });
  return node;
}

/** Drives nodes over [start, end] of base time: each node ticks every tickMs, at its own phase, concurrently with whoever is due. */
async function drive(base: ManualClock, nodes: Node[], endMs: number, seed: string) {
  const rng = new SeededRng(seed);
  const nextTick = nodes.map((n) => base.now() + rng.int(0, n.m.tickMs - 1));
  while (base.now() < endMs) {
    base.advance(rng.int(5_000, 40_000));
    const due = nodes.filter((_, i) => nextTick[i] <= base.now());
    nodes.forEach((n, i) => {
      if (nextTick[i] <= base.now()) nextTick[i] += n.m.tickMs;
    });
    // Shuffle so no node is always first to the unique index.
    due.sort(() => rng.next() - 0.5);
    await Promise.all(due.map((n) => n.m.runOnce()));
  }
}

/** The invariant: each expected instant has exactly one job; nothing else exists. */
export function checkExactlyOnce(expected: number[], actual: number[]) {
  const counts = new Map<number, number>();
  for (const t of actual) counts.set(t, (counts.get(t) ?? 0) + 1);
  const want = new Set(expected);
  return {
    missing: expected.filter((t) => !counts.has(t)),
    duplicated: [...counts].filter(([, n]) => n > 1).map(([t]) => t),
    unexpected: [...counts.keys()].filter((t) => !want.has(t)),
  };
}

async function jobs(queue: string, scheduleId: string) {
  const rows = (
    await db.query<{ run_at: Date; idempotency_key: string; payload: any }>(
      "SELECT run_at, idempotency_key, payload FROM stampede.jobs WHERE queue = $1 AND payload->'cron'->>'scheduleId' = $2 ORDER BY run_at",
      [queue, scheduleId],
    )
  ).rows;
  for (const r of rows) {
    // run_at is the occurrence instant, whatever the node's clock said; the key names the same instant.
    expect(r.idempotency_key).toBe(occurrenceKey(scheduleId, r.run_at.getTime()));
    expect(r.payload.cron.occurrence).toBe(r.run_at.toISOString());
  }
  return rows.map((r) => r.run_at.getTime());
}

const grid = (fromMs: number, toMs: number, stepMs: number) => {
  const out: number[] = [];
  for (let t = fromMs + stepMs; t <= toMs; t += stepMs) out.push(t);
  return out;
};

describe('the exactly-once checker (negative control)', () => {
  it('reports a missing, a duplicated and an unexpected instant', () => {
    expect(checkExactlyOnce([1, 2, 3], [1, 1, 3, 4])).toEqual({ missing: [2], duplicated: [1], unexpected: [4] });
    expect(checkExactlyOnce([1, 2], [2, 1])).toEqual({ missing: [], duplicated: [], unexpected: [] });
  });
});

async function simulateDay(opts: { label: string; day: string; skewsMs: number[]; config: Partial<CronMaterializerConfig> }) {
  const start = Date.parse(`${opts.day}T00:00:00Z`);
  const end = start + 86_400_000;
  const queue = `cron-${opts.label}`;
  await addSchedule(db, { id: `${opts.label}-every5`, cron: '*/5 * * * *', queue }, { startAt: new Date(start) });
  await addSchedule(db, { id: `${opts.label}-daily`, cron: '30 2 * * *', timezone: 'America/New_York', queue }, { startAt: new Date(start) });
  const base = new ManualClock(start);
  const nodes = opts.skewsMs.map((s, i) => makeNode(base, `${opts.label}-n${i}`, s, opts.config));
  await drive(base, nodes, end, opts.label);
  // Pause so later tests on other days are not materialized by anyone's catch-up.
  await db.query("UPDATE stampede.schedules SET enabled = false WHERE id LIKE $1 || '-%'", [opts.label]);

  const every5 = await jobs(queue, `${opts.label}-every5`);
  const daily = await jobs(queue, `${opts.label}-daily`);
  const lastHorizon = Math.max(...every5);
  expect(lastHorizon).toBeGreaterThanOrEqual(end); // the whole day was materialized (and a lookahead beyond)
  expect(checkExactlyOnce(grid(start, lastHorizon, 5 * MIN), every5)).toEqual({ missing: [], duplicated: [], unexpected: [] });
  expect(every5.filter((t) => t <= end)).toHaveLength(288);
  // 02:30 EDT on a June day is 06:30Z.
  expect(checkExactlyOnce([Date.parse(`${opts.day}T06:30:00Z`)], daily)).toEqual({ missing: [], duplicated: [], unexpected: [] });
  return { nodes, every5, daily };
}

describe('three nodes with skewed clocks over a simulated day', () => {
  it('skews -90 s, 0, +90 s: exactly one job per occurrence, none missing, run_at the occurrence instant', async () => {
    const { nodes, every5, daily } = await simulateDay({
      label: 'sec',
      day: '2026-06-15',
      skewsMs: [-90_000, 0, 90_000],
      config: { tickMs: 4 * MIN, lookaheadMs: 7 * MIN, maxSkewMs: 2 * MIN },
    });
    expect(nodes.map((n) => n.m.clockSkewMs)).toEqual([-90_000, 0, 90_000]);
    expect(nodes.flatMap((n) => n.refused)).toEqual([]);
    // The race was real: nodes computed the same occurrences and the unique key collapsed them.
    const computed = nodes.flatMap((n) => n.materialized).reduce((s, e) => s + e.occurrences, 0);
    const inserted = nodes.flatMap((n) => n.materialized).reduce((s, e) => s + e.inserted, 0);
    expect(inserted).toBe(every5.length + daily.length);
    expect(computed).toBeGreaterThan(inserted);
    // The node running ahead writes most rows; early rows are harmless because run_at is the instant.
    const byNode = nodes.map((n) => n.materialized.reduce((s, e) => s + e.inserted, 0));
    expect(byNode[2]).toBeGreaterThan(byNode[0]);
  });

  it('skews of minutes (-4, 0, +6) with maxSkewMs raised to 7 minutes: still exactly once', async () => {
    const { nodes, every5, daily } = await simulateDay({
      label: 'min',
      day: '2026-06-16',
      skewsMs: [-4 * MIN, 0, 6 * MIN],
      config: { tickMs: 4 * MIN, lookaheadMs: 12 * MIN, maxSkewMs: 7 * MIN },
    });
    expect(nodes.flatMap((n) => n.refused)).toEqual([]);
    expect(nodes.map((n) => n.materialized.reduce((s, e) => s + e.inserted, 0)).reduce((a, b) => a + b)).toBe(every5.length + daily.length);
  });

  it('skews of minutes with a 1-minute tolerance: the skewed nodes refuse, the accurate one materializes everything once', async () => {
    const { nodes } = await simulateDay({
      label: 'refuse',
      day: '2026-06-17',
      skewsMs: [-4 * MIN, 0, 6 * MIN],
      config: { tickMs: 4 * MIN, lookaheadMs: 6 * MIN, maxSkewMs: MIN },
    });
    const [behind, accurate, ahead] = nodes;
    for (const n of [behind, ahead]) {
      expect(n.refused.length).toBeGreaterThanOrEqual(359); // every one of its 360 ticks
      expect(n.materialized).toEqual([]);
      expect(n.refused[0].reason).toMatch(/ms off the database clock; the tolerance is 60000 ms/);
    }
    expect(behind.refused[0].skewMs).toBe(-4 * MIN);
    expect(ahead.m.clockSkewMs).toBe(6 * MIN);
    expect(accurate.refused).toEqual([]);
  });
});

async function jumpScenario(db: Db, catchUp: 'all' | 'latest' | 'none') {
  const start = Date.parse('2026-07-01T12:00:00Z');
  const id = `jump-${catchUp}`;
  await addSchedule(db, { id, cron: '*/5 * * * *', queue: 'cron-jump', catchUp }, { startAt: new Date(start) });
  const base = new ManualClock(start);
  const node = makeNode(base, `jump-node-${catchUp}`, 0, { tickMs: 30_000, lookaheadMs: 2 * MIN, maxSkewMs: 30_000 });
  await node.m.runOnce(); // progress to 12:02
  // The host clock (node and database alike) steps forward an hour, as after a suspend or a long outage of every node.
  base.set(Date.parse('2026-07-01T13:00:30Z'));
  const result = await node.m.runOnce();
  const afterJump = await jobs('cron-jump', id);
  while (base.now() < Date.parse('2026-07-01T13:09:00Z')) {
    base.advance(30_000);
    await node.m.runOnce();
  }
  await db.query('UPDATE stampede.schedules SET enabled = false WHERE id = $1', [id]);
  return { result, afterJump: afterJump.map((t) => new Date(t).toISOString().slice(11, 16)), later: (await jobs('cron-jump', id)).slice(afterJump.length) };
}

describe('a forward clock jump of one hour, per catch-up policy', () => {
  const hour = ['12:05', '12:10', '12:15', '12:20', '12:25', '12:30', '12:35', '12:40', '12:45', '12:50', '12:55', '13:00'];
  it('all: every missed occurrence within the window, all due at once (the thundering herd)', async () => {
    const { afterJump, result, later } = await jumpScenario(db, 'all');
    expect(afterJump).toEqual(hour);
    expect(result.schedules[0]).toMatchObject({ occurrences: 12, inserted: 12, dropped: 0 });
    expect(later.map((t) => new Date(t).toISOString().slice(11, 16))).toEqual(['13:05', '13:10']);
  });
  it('latest: only the newest missed one', async () => {
    const { afterJump, result, later } = await jumpScenario(db, 'latest');
    expect(afterJump).toEqual(['13:00']);
    expect(result.schedules[0]).toMatchObject({ occurrences: 1, dropped: 11 });
    expect(later.map((t) => new Date(t).toISOString().slice(11, 16))).toEqual(['13:05', '13:10']);
  });
  it('none: zero, and the schedule carries on from now', async () => {
    const { afterJump, result, later } = await jumpScenario(db, 'none');
    expect(afterJump).toEqual([]);
    expect(result.schedules[0]).toMatchObject({ occurrences: 0, dropped: 12 });
    expect(later.map((t) => new Date(t).toISOString().slice(11, 16))).toEqual(['13:05', '13:10']);
  });
});

describe('a node whose own clock jumps', () => {
  it('refuses while it is beyond the tolerance, exposes the skew, and resumes once it is back', async () => {
    const start = Date.parse('2026-07-02T12:00:00Z');
    await addSchedule(db, { id: 'solo', cron: '*/5 * * * *', queue: 'cron-solo' }, { startAt: new Date(start) });
    const base = new ManualClock(start);
    const node = makeNode(base, 'solo-node', 0, { tickMs: 30_000, lookaheadMs: 2 * MIN, maxSkewMs: 30_000 });
    expect(node.m.clockSkewMs).toBeNull();
    node.clock.jump(3_600_000);
    const refused = await node.m.runOnce();
    expect(refused).toEqual({ skewMs: 3_600_000, refused: true, schedules: [] });
    expect(node.refused).toEqual([{ nodeId: 'solo-node', skewMs: 3_600_000, reason: expect.stringContaining('3600000 ms off') }]);
    expect(await jobs('cron-solo', 'solo')).toEqual([]);
    node.clock.jump(-3_600_000);
    base.advance(4 * MIN);
    expect((await node.m.runOnce()).refused).toBe(false);
    expect(node.m.clockSkewMs).toBe(0);
    expect((await jobs('cron-solo', 'solo')).map((t) => new Date(t).toISOString().slice(11, 16))).toEqual(['12:05']);
    await db.query("UPDATE stampede.schedules SET enabled = false WHERE id = 'solo'");
  });
});

describe('loop', () => {
  it('start() and stop() are idempotent; the loop logs a failed tick and carries on', async () => {
    const start = Date.parse('2026-07-03T12:00:00Z');
    await addSchedule(db, { id: 'looped', cron: '* * * * *', queue: 'cron-loop' }, { startAt: new Date(start) });
    // Signals each time the loop goes to sleep, so the test advances time only when the loop waits on it.
    let slept = () => {};
    const base = new (class extends ManualClock {
      override sleep(ms: number, signal?: AbortSignal) {
        const p = super.sleep(ms, signal);
        slept();
        return p;
      }
    })(start);
    const sleeping = () => new Promise<void>((r) => (slept = r));
    let failNext = true;
    const events = new Events();
    const m = new CronMaterializer({
      db,
      nodeId: 'loop-node',
      clock: base,
      events,
      tickMs: 1_000,
      lookaheadMs: 90_000,
      maxSkewMs: 1_000,
      log: silent,
      dbNow: async () => {
        if (failNext) {
          failNext = false;
          throw new Error('connection reset (injected)');
        }
        return base.now();
      },
    });
    const first = events.waitFor('cron:materialized');
    let asleep = sleeping();
    m.start();
    m.start();
    await asleep;
    expect(failNext).toBe(false); // the first tick ran, failed, and the loop went on to sleep
    asleep = sleeping();
    base.advance(1_000); // wakes the loop: the second tick succeeds
    expect(await first).toMatchObject({ scheduleId: 'looped', occurrences: 1, inserted: 1, nodeId: 'loop-node' });
    await asleep;
    await m.stop();
    await m.stop();
    base.advance(60_000); // no loop is left to wake
    expect((await jobs('cron-loop', 'looped')).length).toBe(1);
    await db.query("UPDATE stampede.schedules SET enabled = false WHERE id = 'looped'");
  });

  it('a schedule broken behind the API (unknown zone written in SQL) is refused alone; the others carry on', async () => {
    const start = Date.parse('2026-07-04T12:00:00Z');
    await addSchedule(db, { id: 'good', cron: '*/5 * * * *', queue: 'cron-broken' }, { startAt: new Date(start) });
    await addSchedule(db, { id: 'bad', cron: '*/5 * * * *', queue: 'cron-broken' }, { startAt: new Date(start) });
    await db.query("UPDATE stampede.schedules SET timezone = 'Atlantis/Capital' WHERE id = 'bad'");
    const base = new ManualClock(start);
    const node = makeNode(base, 'broken-node', 0, { tickMs: 30_000, lookaheadMs: 6 * MIN, maxSkewMs: 30_000 });
    const result = await node.m.runOnce();
    expect(result.schedules.map((s) => s.scheduleId).filter((id) => id === 'good' || id === 'bad')).toEqual(['good']);
    expect(node.refused).toEqual([expect.objectContaining({ scheduleId: 'bad', reason: expect.stringContaining('timezone: "Atlantis/Capital" is not a known IANA time zone') })]);
    expect(await jobs('cron-broken', 'good')).toHaveLength(1);
    await db.query("UPDATE stampede.schedules SET enabled = false WHERE id IN ('good', 'bad')");
  });

  it('refuses a configuration whose lookahead cannot cover a tick plus the skew tolerance', () => {
    expect(() => new CronMaterializer({ db, nodeId: 'x', clock: new ManualClock(), events: new Events(), tickMs: 5_000, lookaheadMs: 30_000, maxSkewMs: 30_000 })).toThrow(
      /^lookaheadMs: 30000 must exceed tickMs \+ maxSkewMs \(5000 \+ 30000\)/,
    );
    expect(() => new CronMaterializer({ db, nodeId: '', clock: new ManualClock(), events: new Events() })).toThrow(/^nodeId: expected a non-empty string/);
  });
});
