import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../engine/log.ts';
import { BenchContext } from '../bench/context.ts';
import { CHILD_SCRIPT, childCommand, loaderProblem, WorkerChild } from '../bench/proc.ts';
import { CONFIGS } from '../bench/systems/configs.ts';

// Every system's worker child must run the same way, plain node on compiled
// JavaScript, so the bench's RSS and CPU figures compare like with like.
describe('bench worker children', () => {
  it('are forked as plain node on a .js file, with no execArgv and no NODE_OPTIONS, for every system', () => {
    const saved = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = '--import tsx';
    try {
      for (const c of CONFIGS) {
        const cmd = childCommand(c.id, 'postgres://x');
        expect(cmd.script).toBe(CHILD_SCRIPT);
        expect(cmd.script).toMatch(/\/dist\/bench\/worker-child\.js$/);
        expect(cmd.execArgv).toEqual([]);
        expect(cmd.env.NODE_OPTIONS).toBeUndefined();
        expect(cmd.args).toEqual([c.id, 'postgres://x']);
      }
    } finally {
      if (saved === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = saved;
    }
  });

  it('refuses a child that runs under a loader or from TypeScript (negative controls)', () => {
    const plain = { node: 'v20', execArgv: [], nodeOptions: '', script: 'file:///r/dist/bench/worker-child.js' };
    expect(loaderProblem(plain)).toBeNull();
    expect(loaderProblem({ ...plain, execArgv: ['--import', 'tsx'] })).toBe('runs with execArgv ["--import","tsx"]');
    expect(loaderProblem({ ...plain, nodeOptions: '--import tsx' })).toBe('runs with NODE_OPTIONS "--import tsx"');
    expect(loaderProblem({ ...plain, script: 'file:///r/bench/worker-child.ts' })).toBe('runs file:///r/bench/worker-child.ts, not compiled JavaScript');
  });

  describe('as they run', () => {
    const ctx = new BenchContext(inject('pgAdminUrl'), createLogger('bench-child-test', 'warn'));
    beforeAll(() => {
      // The global setup built dist/ (the engine); this adds dist/bench/ on top (seconds) and
      // leaves dist/engine/ alone, which other test files' processes are running from.
      execFileSync('npm', ['run', 'bench:compile', '--silent'], { stdio: 'inherit' });
      expect(existsSync(CHILD_SCRIPT)).toBe(true);
    }, 180_000);
    afterAll(() => ctx.cleanup());

    it.each(CONFIGS.map((c) => [c.id, c] as const))('%s reports plain node on dist/bench/worker-child.js, no tsx', async (_id, config) => {
      const db = await ctx.freshDatabase(config);
      const child = new WorkerChild(config.id, db.url);
      try {
        const runtime = await child.ready();
        expect(runtime.execArgv).toEqual([]);
        expect(runtime.nodeOptions).toBe('');
        expect(runtime.script).toMatch(/\/dist\/bench\/worker-child\.js$/);
        expect(runtime.node).toBe(process.version);
        // Seen from outside as well: the kernel's command line of the child is node, the .js file, its two arguments.
        const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
        expect(cmdline).toEqual([process.execPath, CHILD_SCRIPT, config.id, db.url]);
      } finally {
        child.kill();
        await child.exit();
        await db.drop();
      }
    });
  });
});
