// Runner-level negative control: a scenario run against a deliberately broken
// engine exits 1 with the invariant the mutant must trip, named. The scenario
// is a user file (also exercising that path): a 2 s dependency outage while a
// burst of jobs falls due, so the no-jitter mutant retries them in lockstep.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scenarioCli } from './support/scenario-cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'stampede-mutant-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SCENARIO = `export default {
  name: 'mini-retry-storm',
  description: 'A dependency outage while a burst falls due: retries must not come back in lockstep.',
  seed: 3,
  durationS: 10,
  load: { model: 'constant', rate: 40 },
  workers: 2,
  concurrency: 16,
  engine: { pollMs: 50, backoffBaseMs: 2000, backoffCapMs: 30000, maxAttempts: 10 },
  faults: [
    { fault: 'dependency-outage', atS: 2, forS: 3 },
    { fault: 'thundering-herd', atS: 2.5, count: 300 },
  ],
  checkers: { 'retry-spread': true, 'exactly-one-effect': false },
  drainTimeoutS: 40,
};
`;

async function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = scenarioCli(args);
  const code = await cli.code;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

/** The share of retries due together with their cohort, from the retry-spread figure ("... (31.2 %) came due ..."). */
const cohortShare = (summary: any): number => {
  const figure: string = summary.invariants.find((i: any) => i.name === 'retry-spread').figure;
  return Number(/\(([\d.]+) %\)/.exec(figure)![1]);
};

describe('a mutant run', () => {
  let control: any;

  it('control: the same scenario on the real engine holds every other invariant and spreads its retries', async () => {
    const file = join(tmp, 'mini-retry-storm.ts');
    writeFileSync(file, SCENARIO);
    const r = await run([file, '--json', '--out', join(tmp, 'control')]);
    control = JSON.parse(r.stdout);
    const failed = control.invariants.filter((i: any) => i.pass !== true).map((i: any) => `${i.name}: ${i.figure}`);
    expect(failed).toEqual([]);
    expect(cohortShare(control)).toBeLessThan(50);
  }, 180_000);

  it('no-jitter exits 1 with retry-spread named as the violated invariant, far above the control', async () => {
    const file = join(tmp, 'mini-retry-storm.ts');
    writeFileSync(file, SCENARIO);
    const r = await run([file, '--mutant', 'no-jitter', '--json', '--out', join(tmp, 'run')]);
    expect(r.code, r.stderr.slice(-2000)).toBe(1);
    const summary = JSON.parse(r.stdout);
    expect(summary.verdict).toBe('fail');
    expect(summary.replayCommand).toContain('--mutant no-jitter');
    const spread = summary.invariants.find((i: any) => i.name === 'retry-spread');
    expect(spread.pass).toBe(false);
    // The fault bit: the outage was injected and failed jobs, so this is a verdict, not an accident.
    expect(summary.invariants.find((i: any) => i.name === 'faults-exercised').pass).toBe(true);
    // Lockstep brings each cohort back together; the jittered control spread it.
    expect(cohortShare(summary)).toBeGreaterThan(cohortShare(control) * 1.5);
  }, 180_000);
});
