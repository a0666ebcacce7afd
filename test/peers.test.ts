// The harness judges other engines (docs/peers.md): each peer adapter runs a
// small scenario end to end through the compiled CLI, with its own embedded
// Postgres, and an invariant the peer does not promise is reported as such.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCheckers } from '../harness/checkers/index.ts';
import { stampedeAdapter } from '../harness/engines/index.ts';
import { pgBossAdapter } from '../harness/engines/pg-boss.ts';
import { splitByPromise } from '../harness/engines/promises.ts';
import type { EngineAdapter } from '../harness/engines/types.ts';
import type { FinalState } from '../harness/history.ts';
import { runControl } from './support/peer-control.ts';
import { scenarioCli as cli } from './support/scenario-cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'stampede-peers-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** One effect job, done, whose effect was applied twice: what an at-least-once engine may leave after a kill. */
const twiceApplied: FinalState = {
  jobs: [{ id: 1, queue: 'default', state: 'done', attempts: 2, priority: 0, idempotencyKey: 'op:1' }],
  deadLetters: [],
  effects: { 'op:1': 2 },
};

/** The verdict of exactly-one-effect on `twiceApplied` for `engine`, through the same split the peer runner uses. */
function judgeTwiceApplied(engine: EngineAdapter) {
  const { judged, notPromised } = splitByPromise(engine, ['exactly-one-effect']);
  return [...runCheckers(judged, [], twiceApplied), ...notPromised][0];
}

describe('an invariant an engine does not promise', () => {
  it('reports "not promised" for a peer without the promise, never pass or fail, even over a history that breaks it', () => {
    const r = judgeTwiceApplied(pgBossAdapter);
    expect(r.pass).toBe('not-promised');
    expect(r.notPromised).toContain('pg-boss does not promise effectOnce');
    expect(r.judged.n).toBe(0);
  });

  it('negative control: the same history fails the invariant for an engine that makes the promise', () => {
    expect(judgeTwiceApplied(stampedeAdapter).pass).toBe(false);
    // And for the same peer, were it to promise it: the answer follows the declaration, not the engine's name.
    expect(judgeTwiceApplied({ ...pgBossAdapter, promises: { ...pgBossAdapter.promises, effectOnce: true } }).pass).toBe(false);
  });
});

describe('peer engines under the harness', () => {
  for (const engine of ['graphile-worker', 'pg-boss']) {
    it(`${engine}: a short steady run judges the peer, and exactly-one-effect is "not promised"`, async () => {
      const run = cli(['steady', '--engine', engine, '--duration', '2', '--rate', '30', '--seed', '3', '--json', '--out', join(tmp, engine)]);
      const code = await run.code;
      const report = JSON.parse(run.stdout());
      expect(report.replayCommand).toContain(`--engine ${engine}`);
      const byName = Object.fromEntries(report.invariants.map((i: any) => [i.name, i]));
      expect(byName['no-job-lost'].pass, run.stderr()).toBe(true);
      expect(byName['no-job-lost'].judged.n).toBeGreaterThan(0);
      expect(byName['exactly-one-effect'].pass).toBe('not-promised');
      expect(byName['exactly-one-effect'].notPromised).toContain(`${engine} does not promise effectOnce`);
      // Not promised is neither pass nor fail: the verdict rests on the rest.
      expect(report.verdict).toBe('pass');
      expect(code).toBe(0);
    }, 180_000);
  }

  it('known-bug control: pg-boss 12.25.1 leaves a killed job with a per-job heartbeat claimed past the drain; 12.26.0 (the fix) retries it', async () => {
    // One run per release, one after the other: the machine's Postgres and cores are shared.
    const judge = (release: string) => runControl('peer-heartbeat-kill', 'pg-boss', release, tmp);
    const before = await judge('pg-boss-12-25-1');
    expect(before.report.scenario.description, before.stderr).toContain('(engine: pg-boss 12.25.1)');
    expect(before.byName['faults-exercised'].pass).toBe(true);
    // The killed worker's jobs are still active when the drain gives up: not lost, not done.
    expect(before.byName['queue-drained'].pass).toBe('unknown');
    expect(before.byName['queue-drained'].figure).toMatch(/^[1-9]\d* of \d+ jobs unfinished \([1-9]\d* claimed\)/);
    expect(before.report.verdict).toBe('inconclusive');

    const after = await judge('pg-boss-12-26-0');
    expect(after.report.scenario.description, after.stderr).toContain('(engine: pg-boss 12.26.0)');
    expect(after.byName['faults-exercised'].pass).toBe(true);
    expect(after.byName['queue-drained'].pass).toBe(true);
    expect(after.byName['no-job-lost'].pass).toBe(true);
    expect(after.report.verdict).toBe('pass');
    expect(after.code).toBe(0);
  }, 300_000);

  it('a known-bug control runs only against the peer it names', async () => {
    const run = cli(['peer-heartbeat-kill', '--engine', 'graphile-worker']);
    expect(await run.code).toBe(2);
    expect(run.stderr()).toContain('adapter settings for pg-boss only');
  }, 60_000);

  it('a scenario whose faults a peer has no counterpart of exits 2 and says why', async () => {
    const run = cli(['cron-skew', '--engine', 'pg-boss']);
    expect(await run.code).toBe(2);
    expect(run.stderr()).toContain('scenario cron-skew cannot run against pg-boss');
  }, 60_000);

  it('an unknown engine is a usage error naming the choices', async () => {
    const run = cli(['steady', '--engine', 'sidekiq']);
    expect(await run.code).toBe(2);
    expect(run.stderr()).toContain('--engine: unknown engine "sidekiq"; expected one of stampede, graphile-worker, pg-boss');
  }, 60_000);
});
