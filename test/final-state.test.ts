import { beforeAll, describe, expect, it } from 'vitest';
import { enqueue } from '../engine/enqueue.ts';
import { readFinalState } from '../harness/runner/final-state.ts';
import { harnessQueries as q } from '../harness/runner/queries.ts';
import { freshDatabase } from './support/db.ts';
import { until } from './support/wait.ts';

const { db } = await freshDatabase();
beforeAll(async () => {
  await db.query(q.CreateHarnessTables);
});

describe('readFinalState', () => {
  it('judges "not due yet" as of the drain: a cron row that fell due while the fleet stopped is not unfinished work', async () => {
    const dbNow = async (): Promise<Date> => (await db.query('SELECT now() AS now')).rows[0].now;
    const drainedAt = await dbNow();
    const job = await enqueue(db, 'cron', { kind: 'normal' }, { runAt: new Date(drainedAt.getTime() + 300) });
    await until('the row is due', async () => (await dbNow()).getTime() > drainedAt.getTime() + 300);

    const asOfDrain = await readFinalState(db, drainedAt);
    expect(asOfDrain.jobs.find((j) => j.id === job.id)).toMatchObject({ state: 'pending', notDueYet: true });
    // Control: read as of now, the same row is due and unfinished.
    const asOfNow = await readFinalState(db);
    expect(asOfNow.jobs.find((j) => j.id === job.id)?.notDueYet).toBeUndefined();
  });
});
