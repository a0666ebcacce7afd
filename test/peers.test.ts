// The harness judges other engines (docs/peers.md): each peer adapter runs a
// small scenario end to end through the compiled CLI, with its own embedded
// Postgres, and an invariant the peer does not promise is reported as such.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scenarioCli as cli } from './support/scenario-cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'stampede-peers-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

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
