// The README's first example, run as a newcomer runs it: its code block taken verbatim
// from README.md, saved as an .mjs file in an empty project where `stampede-queue`
// is this build, and run with plain node against a fresh, unmigrated database. So the
// first thing a reader copies cannot rot.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { Db } from '../engine/db.ts';
import { createDatabase, dropDatabase } from '../harness/postgres/databases.ts';
import { firstExample } from './support/readme-example.ts';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('..', import.meta.url));

/** An empty project whose node_modules/stampede-queue is this repository (built: dist/ is what it exports). */
function projectWithThisBuild(): string {
  const dir = mkdtempSync(join(tmpdir(), 'stampede-readme-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(REPO, join(dir, 'node_modules', 'stampede-queue'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'newcomer', version: '1.0.0' }));
  return dir;
}

describe("the README's first example", () => {
  it('runs as written from an empty project: the job ends done and its effect is written once, also when run again', async () => {
    const admin = inject('pgAdminUrl');
    const name = `stampede_readme_${process.pid}`;
    await dropDatabase(admin, name);
    const url = await createDatabase(admin, name); // no template: the example migrates it itself
    onTestFinished(() => dropDatabase(admin, name));
    const dir = projectWithThisBuild();
    writeFileSync(join(dir, 'first.mjs'), firstExample());
    const env = { ...process.env, DATABASE_URL: url, STAMPEDE_LOG: 'warn' };

    const first = await run(process.execPath, ['first.mjs'], { cwd: dir, env });
    expect(first.stdout).toMatch(/^job \d+: done$/m);
    // Run again, as a reader will: the same key enqueues nothing and the example still ends.
    const again = await run(process.execPath, ['first.mjs'], { cwd: dir, env });
    expect(again.stdout).toContain('enqueued by an earlier run');

    const db = new Db({ connectionString: url, maxConnections: 1 });
    onTestFinished(() => db.close());
    const jobs = (await db.query(`SELECT state FROM stampede.jobs WHERE queue = 'email'`)).rows;
    expect(jobs).toEqual([{ state: 'done' }]);
    const sent = (await db.query('SELECT idempotency_key, recipient FROM sent_emails')).rows;
    expect(sent).toEqual([{ idempotency_key: 'welcome:ada', recipient: 'ada@example.com' }]);
  });
});
