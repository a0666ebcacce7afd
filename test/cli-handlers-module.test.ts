// The handlers module of a default `npm init -y` project, which is CommonJS ("type": "commonjs"), through the
// real CLI: a CommonJS module (`module.exports = { queue: handler }`) runs its jobs; an ES module written in a .js
// file there is refused with exit 2 and the exact fix, instead of Node's bare "Unexpected token 'export'".
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, onTestFinished } from 'vitest';
import { enqueue } from '../engine/enqueue.ts';
import { compiledEntry } from '../engine/supervisor/compiled-entry.ts';
import { freshDatabase } from './support/db.ts';
import { jobRow } from './support/jobs.ts';
import { until } from './support/wait.ts';
import { spawnWorker } from './support/worker-process.ts';

const { db, url } = await freshDatabase();

/** A project as `npm init -y` writes it today: CommonJS, said explicitly. */
function commonJsProject(): string {
  const dir = mkdtempSync(join(tmpdir(), 'stampede-cjs-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', type: 'commonjs' }, null, 2));
  return dir;
}

describe('a handlers module in a CommonJS project', () => {
  it('module.exports = { queue: handler } runs its jobs', async () => {
    await db.query('CREATE TABLE cjs_sent (job_id bigint PRIMARY KEY)');
    const handlers = join(commonJsProject(), 'handlers.js');
    writeFileSync(
      handlers,
      "module.exports = {\n  email: async (payload, ctx) => {\n    await ctx.effectOnce((tx) => tx.query('INSERT INTO cjs_sent (job_id) VALUES ($1)', [ctx.job.id]));\n  },\n};\n",
    );
    const job = await enqueue(db, 'email', { to: 'ada@example.com' });
    const worker = spawnWorker(url, [], handlers);
    await until('the CommonJS handler ran the job', async () => (await jobRow(db, job.id)).state === 'done', 30_000).catch((err) => {
      throw new Error(`${(err as Error).message}; the worker's stderr:\n${worker.stderr}`);
    });
    expect((await db.query('SELECT job_id FROM cjs_sent')).rows).toEqual([{ job_id: job.id }]);
    expect(await worker.stop()).toMatchObject({ code: 0 });
  });

  it('export default in a .js file is refused with exit 2, saying to rename it to .mjs or add "type": "module"', async () => {
    const dir = commonJsProject();
    const handlers = join(dir, 'handlers.js');
    writeFileSync(handlers, 'export default { email: async () => {} };\n');
    const r = await promisify(execFile)(process.execPath, [compiledEntry('bin/stampede.ts'), 'worker', '--handlers', handlers], {
      env: { ...process.env, DATABASE_URL: url, STAMPEDE_LOG: 'warn' },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--handlers ${handlers}: ${handlers} is an ES module (export/import)`);
    expect(r.stderr).toContain(`rename it to handlers.mjs or add "type": "module" to ${join(dir, 'package.json')}`);
  });
});
