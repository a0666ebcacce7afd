// Runner-level tests: `bin/scenario.ts` as a user runs it, as a child process
// with its own Postgres (the runner's provisioning, forced to embedded), judged
// by its exit code, its --json summary and what it leaves on disk.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scenarioCli as cli } from './support/scenario-cli.ts';
import { until } from './support/wait.ts';

const tmp = mkdtempSync(join(tmpdir(), 'stampede-run-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const EXPECTED_KEYS = ['scenario', 'seed', 'verdict', 'replayCommand', 'invariants'];

describe('scenario runner, end to end', () => {
  it('an unknown scenario exits 2 and lists the scenarios', async () => {
    const run = cli(['no-such-scenario']);
    expect(await run.code).toBe(2);
    expect(run.stderr()).toContain('unknown scenario "no-such-scenario"');
    for (const name of ['steady', 'worker-crash', 'dst-fall-back', 'xmin-horizon']) expect(run.stderr()).toContain(name);
    // A name every object has is no scenario either.
    const inherited = cli(['constructor']);
    expect(await inherited.code).toBe(2);
    expect(inherited.stderr()).toContain('unknown scenario "constructor"');
  });

  it('a malformed scenario file exits 2 naming the field', async () => {
    const file = join(tmp, 'bad-incident.ts');
    writeFileSync(file, `export default { name: 'bad-incident', description: 'a typo in the load', load: { rate: 'fast' } };\n`);
    const run = cli([file]);
    expect(await run.code).toBe(2);
    expect(run.stderr()).toContain('scenario.load.rate: expected a positive number, got "fast"');
  });

  const out = join(tmp, 'steady');
  let summary: any;

  it('a short steady run passes: exit 0 and a well-formed JSON summary', async () => {
    const run = cli(['steady', '--duration', '3', '--rate', '100', '--seed', '5', '--json', '--out', out]);
    expect(await run.code).toBe(0);
    summary = JSON.parse(run.stdout());
    for (const k of EXPECTED_KEYS) expect(summary).toHaveProperty(k);
    expect(summary.scenario.name).toBe('steady');
    expect(summary.seed).toBe(5);
    expect(summary.verdict).toBe('pass');
    expect(summary.interrupted).toBe(false);
    expect(summary.replayCommand).toBe('npx stampede-queue scenario steady --seed 5 --duration 3 --rate 100');
    expect(summary.invariants.length).toBeGreaterThan(3);
    for (const inv of summary.invariants) {
      expect(Object.keys(inv)).toEqual(expect.arrayContaining(['name', 'pass', 'figure', 'bound']));
      expect(inv.pass).toBe(true);
    }
    // The same object is the run's report.json, beside the history it was judged on.
    expect(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')).invariants).toEqual(summary.invariants);
    expect(existsSync(join(out, 'history.jsonl'))).toBe(true);
  }, 180_000);

  it('--recheck on the stored run reproduces the verdict without running the system', async () => {
    expect(summary, 'needs the steady run above').toBeDefined();
    const run = cli(['--recheck', out, '--json']);
    expect(await run.code).toBe(0);
    const again = JSON.parse(run.stdout());
    expect(again.verdict).toBe(summary.verdict);
    expect(again.invariants.map((i: any) => [i.name, i.pass, i.figure])).toEqual(summary.invariants.map((i: any) => [i.name, i.pass, i.figure]));
    // Nothing was provisioned to recheck.
    expect(run.stderr()).not.toContain('PostgreSQL started');
  }, 60_000);

  it('SIGINT mid-run exits 130, writes a report marked interrupted, and leaves no server or temp dir behind', async () => {
    const dir = join(tmp, 'interrupted');
    const run = cli(['steady', '--duration', '60', '--rate', '100', '--json', '--out', dir]);
    // Mid-run: the load phase has begun (the first progress line).
    await until('the load phase to start', () => /^load\s/m.test(run.stderr()), 120_000, 100);
    const pgDir = /embedded PostgreSQL started .*dir=(\S+)/.exec(run.stderr())?.[1];
    expect(pgDir, 'the runner reports where its server lives').toBeTruthy();
    expect(existsSync(pgDir!)).toBe(true);
    run.kill('SIGINT');
    expect(await run.code).toBe(130);
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8'));
    expect(report.interrupted).toBe(true);
    expect(readFileSync(join(dir, 'report.md'), 'utf8').toLowerCase()).toContain('interrupted');
    expect(existsSync(pgDir!)).toBe(false);
    const ps = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
    expect(ps.split('\n').filter((l) => l.includes(pgDir!))).toEqual([]);
  }, 180_000);
});
