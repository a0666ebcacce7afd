import { describe, expect, it } from 'vitest';
import { ManualClock } from '../engine/clock.ts';
import { CronMaterializer } from '../engine/cron/materializer.ts';
import { DST_POLICIES } from '../engine/cron/policy.ts';
import { addSchedule } from '../engine/cron/schedule.ts';
import { Events } from '../engine/events.ts';
import { createLogger } from '../engine/log.ts';
import { DST_CASES } from './support/cron-dst-cases.ts';
import { freshDatabase } from './support/db.ts';

/**
 * The DST nights of test/cron-occurrences.test.ts, end to end: one schedule
 * per policy, materialized into job rows by a node ticking hourly through
 * the night, and the rows' run_at compared with the lists written out in
 * support/cron-dst-cases.ts.
 */

const { db } = await freshDatabase();
const HOUR = 3_600_000;

describe('DST nights materialized into job rows, per policy', () => {
  DST_CASES.forEach((c, i) => {
    it(c.name, async () => {
      const from = Date.parse(c.from);
      const to = Date.parse(c.to);
      const queue = `dst-${i}`;
      for (const policy of DST_POLICIES) {
        await addSchedule(db, { id: `dst${i}-${policy}`, cron: c.cron, timezone: c.timezone, queue, dstPolicy: policy }, { startAt: new Date(from) });
      }
      const clock = new ManualClock(from);
      const m = new CronMaterializer({
        db,
        nodeId: `dst-node-${i}`,
        clock,
        events: new Events(),
        tickMs: HOUR,
        lookaheadMs: 2 * HOUR,
        maxSkewMs: 0,
        dbNow: async () => clock.now(),
        log: createLogger('cron-dst-test', 'silent'),
      });
      // Hourly ticks, the last one with its horizon exactly at `to`.
      for (; clock.now() + m.lookaheadMs < to; clock.advance(HOUR)) await m.runOnce();
      clock.set(to - m.lookaheadMs);
      await m.runOnce();
      await db.query("UPDATE stampede.schedules SET enabled = false WHERE id LIKE $1 || '-%'", [`dst${i}`]);

      const rows = (
        await db.query<{ schedule: string; run_at: Date }>(
          "SELECT payload->'cron'->>'scheduleId' AS schedule, run_at FROM stampede.jobs WHERE queue = $1 ORDER BY run_at",
          [queue],
        )
      ).rows;
      const got = Object.fromEntries(DST_POLICIES.map((p) => [p, rows.filter((r) => r.schedule === `dst${i}-${p}`).map((r) => r.run_at.toISOString())]));
      expect(got).toEqual(c.expected);
    });
  });
});
