import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { enqueue } from '../engine/enqueue.ts';
import { freshDatabase } from './support/db.ts';
import { jobRow } from './support/jobs.ts';

const { db, url } = await freshDatabase();

/** Runs `npm run control -- ...args` against this file's database; resolves with its exit code and output. */
function control(args: string[], env: Record<string, string | undefined> = { DATABASE_URL: url }) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/control.ts', ...args], {
    env: { ...process.env, DATABASE_URL: undefined, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

const who = ['--by', 'alice', '--reason', 'incident 42'];

describe('npm run control', () => {
  it('cancels, pauses, limits, shows and lists the audit; exit 0', async () => {
    const job = await enqueue(db, 'cli-q', {});
    await enqueue(db, 'cli-q', {}); // a pending job names the queue after the first is cancelled
    expect(await control(['cancel', String(job.id), ...who])).toMatchObject({ code: 0, stdout: `cancelled job ${job.id} (queue cli-q, was pending)\n` });
    expect((await jobRow(db, job.id)).state).toBe('cancelled');
    expect((await control(['pause', 'cli-q', ...who])).stdout).toMatch(/^paused cli-q at .*: no worker claims from it until resume\n$/);
    expect((await control(['limit', 'cli-q', '--max-in-flight', '5', ...who])).stdout).toMatch(/^cli-q\tpaused since .* by alice: incident 42\tmax-in-flight=5\tmax-starts-per-second=none\n$/);
    // Setting the rate keeps the in-flight limit; "none" removes one.
    expect((await control(['limit', 'cli-q', '--max-starts-per-second', '2.5', ...who])).stdout).toMatch(/max-in-flight=5\tmax-starts-per-second=2.5\n$/);
    expect((await control(['limit', 'cli-q', '--max-starts-per-second', 'none', ...who])).stdout).toMatch(/max-in-flight=5\tmax-starts-per-second=none\n$/);
    expect((await control(['show', '--json'])).stdout).toContain('"maxInFlight": 5');
    const audit = await control(['audit', '--queue', 'cli-q']);
    expect(audit.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[2])).toEqual(['set-limits', 'set-limits', 'set-limits', 'pause', 'cancel']);
  });

  it('exit 2 for a refused action, naming the job and why', async () => {
    const job = await enqueue(db, 'cli-q2', {});
    await control(['kill', String(job.id), ...who]);
    const r = await control(['cancel', String(job.id), ...who]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`stampede control: cancel job ${job.id}: it is dead; expected pending or failed or claimed`);
    const unknown = await control(['pause', 'no-such-queue', ...who]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('pause queue "no-such-queue": no job, dead letter, schedule or setting names it');
    // At the command line the way past it is the flag, not the API's option.
    expect(unknown.stderr).toContain('check the spelling, or pass --new to configure a queue before its first job');
    expect(unknown.stderr).not.toContain('allowNew');
  });

  it('exit 2 for bad input: a missing --by, a bad id, a bad limit, an unknown command, no DATABASE_URL', async () => {
    const noWho = await control(['cancel', '1', '--reason', 'x']);
    expect(noWho).toMatchObject({ code: 2 });
    expect(noWho.stderr).toContain('cancel: --by WHO and --reason WHY are required');
    expect((await control(['retry', 'abc', ...who])).stderr).toContain('retry: expected a job id (an integer >= 1), got "abc"');
    expect((await control(['limit', 'cli-q', '--max-in-flight', '2.5', ...who])).stderr).toContain('--max-in-flight: expected an integer >= 1 or "none", got "2.5"');
    expect((await control(['limit', 'cli-q', ...who])).stderr).toContain('limit: expected --max-in-flight and/or --max-starts-per-second');
    expect((await control(['frobnicate'])).code).toBe(2);
    expect((await control(['--bogus'])).code).toBe(2);
    const noUrl = await control(['show'], {});
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('DATABASE_URL is not set');
  });
});
