import { describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../engine/migrator.ts';
import { committedSnapshot, schemaSnapshot, snapshotDiff } from '../harness/postgres/schema-snapshot.ts';
import { emptyDatabase } from './support/db.ts';

describe('migrations', () => {
  it('are numbered 0001 to N without a gap or a repeat', () => {
    const numbers = readMigrations().map((m) => Number(m.name.slice(0, 4)));
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
  });

  it('build exactly the committed schema snapshot (npm run schema:snapshot rewrites it)', async () => {
    const { db } = await emptyDatabase('stampede_snap');
    await migrate(db);
    const diff = snapshotDiff(committedSnapshot(), await schemaSnapshot(db));
    expect(diff, `the migrations build another schema than migrations/schema.snapshot.txt (- committed, + fresh); run npm run schema:snapshot if that is intended:\n${diff}`).toBe('');
  });

  it('a diff names what changed, line by line', () => {
    const committed = 'column jobs.id bigint not null\ncolumn jobs.queue text not null\n';
    expect(snapshotDiff(committed, 'column jobs.id bigint not null\ncolumn jobs.queue text\n')).toBe('- column jobs.queue text not null\n+ column jobs.queue text');
    expect(snapshotDiff(committed, committed)).toBe('');
  });
});
