import { describe, expect, it, onTestFinished } from 'vitest';
import { Db } from '../engine/db.ts';
import { migrate, readMigrations, unappliedMigrations } from '../engine/migrator.ts';
import { enqueue } from '../engine/enqueue.ts';
import { emptyDatabase, freshDatabase } from './support/db.ts';

describe('migrator', () => {
  it('two nodes migrating an empty database at once apply each migration exactly once', async () => {
    const { db: a, url } = await emptyDatabase('stampede_mig', 2);
    const b = new Db({ connectionString: url, maxConnections: 2 });
    onTestFinished(() => b.close());
    const [ranA, ranB] = await Promise.all([migrate(a), migrate(b)]);
    const all = readMigrations().map((m) => m.name);
    expect([...ranA, ...ranB].sort()).toEqual(all);
    expect(await migrate(a)).toEqual([]);
    const recorded = (await a.query('SELECT name FROM stampede.migrations ORDER BY name')).rows.map((r) => r.name);
    expect(recorded).toEqual(all);
  });
});

describe('unappliedMigrations', () => {
  it('names what a database still lacks, in order, and creates nothing to find out', async () => {
    const { db } = await emptyDatabase('stampede_lack');
    const all = readMigrations();
    expect(await unappliedMigrations(db)).toEqual(all.map((m) => m.name));
    expect((await db.query(`SELECT to_regnamespace('stampede') AS schema`)).rows[0].schema).toBeNull();
    await migrate(db, all.slice(0, 3));
    expect(await unappliedMigrations(db)).toEqual(all.slice(3).map((m) => m.name));
    await migrate(db);
    expect(await unappliedMigrations(db)).toEqual([]);
  });
});

describe('the job state machine is enforced by the database', () => {
  it('refuses a transition the design does not allow', async () => {
    const { db } = await freshDatabase();
    const job = await enqueue(db, 'sm', {});
    await expect(db.query("UPDATE stampede.jobs SET state = 'done' WHERE id = $1", [job.id])).rejects.toThrow(
      /may not go from pending to done/,
    );
    await expect(
      db.query("UPDATE stampede.jobs SET state = 'claimed' WHERE id = $1", [job.id]),
    ).rejects.toThrow(/claimed_has_lease/);
  });
});
