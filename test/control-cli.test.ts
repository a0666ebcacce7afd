import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { getQueueControl, listAudit, listKeyWeights } from '../engine/control/index.ts';
import { enqueue } from '../engine/enqueue.ts';
import { compiledEntry } from '../engine/supervisor/compiled-entry.ts';
import { freshDatabase } from './support/db.ts';
import { jobRow } from './support/jobs.ts';

const { db, url } = await freshDatabase();

/** Runs `stampede control ...args` (the compiled bin on plain node) against this file's database; resolves with its exit code and output. */
function control(args: string[], env: Record<string, string | undefined> = { DATABASE_URL: url }) {
  const child = spawn(process.execPath, [compiledEntry('bin/stampede.ts'), 'control', ...args], {
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

describe('stampede control', () => {
  it('cancels, pauses, limits, shows and lists the audit; exit 0', async () => {
    const job = await enqueue(db, 'cli-q', {});
    await enqueue(db, 'cli-q', {}); // a pending job names the queue after the first is cancelled
    expect(await control(['cancel', String(job.id), ...who])).toMatchObject({ code: 0, stdout: `cancelled job ${job.id} (queue cli-q, was pending)\n` });
    expect((await jobRow(db, job.id)).state).toBe('cancelled');
    expect((await control(['pause', 'cli-q', ...who])).stdout).toMatch(/^paused cli-q at .*: no worker claims from it until resume\n$/);
    expect((await control(['limit', 'cli-q', '--max-in-flight', '5', ...who])).stdout).toMatch(
      /^cli-q\tpaused since .* by alice: incident 42\tmax-in-flight=5\tmax-starts-per-second=none\tmax-in-flight-per-key=none\tsequential=off\n$/,
    );
    // Setting the rate keeps the in-flight limit; "none" removes one.
    expect((await control(['limit', 'cli-q', '--max-starts-per-second', '2.5', ...who])).stdout).toMatch(/max-in-flight=5\tmax-starts-per-second=2.5\t/);
    expect((await control(['limit', 'cli-q', '--max-starts-per-second', 'none', ...who])).stdout).toMatch(/max-in-flight=5\tmax-starts-per-second=none\t/);
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
    expect((await control(['limit', 'cli-q', ...who])).stderr).toContain('limit: expected --max-in-flight, --max-starts-per-second, --max-in-flight-per-key');
    expect((await control(['frobnicate'])).code).toBe(2);
    // A name every object has is no command either.
    const inherited = await control(['constructor', ...who]);
    expect(inherited.code).toBe(2);
    expect(inherited.stderr).toContain('unknown command "constructor"; expected one of cancel, retry');
    expect((await control(['--bogus'])).code).toBe(2);
    const noUrl = await control(['show'], {});
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('DATABASE_URL is not set');
  });

  it('retries, dead-letters, redrives and resumes; exit 0, each audited', async () => {
    const job = await enqueue(db, 'cli-r', {});
    expect((await control(['dead-letter', String(job.id), ...who])).stdout).toBe(`dead-lettered job ${job.id} (queue cli-r, was pending)\n`);
    expect((await control(['retry', String(job.id), ...who])).stdout).toBe(`retried job ${job.id} (queue cli-r, was dead)\n`);
    await control(['kill', String(job.id), ...who]);
    expect((await control(['redrive', '--queue', 'cli-r', ...who])).stdout).toBe(`redrove 1 dead letter(s) of cli-r: ${job.id}\n`);
    expect((await jobRow(db, job.id)).state).toBe('pending');
    await control(['pause', 'cli-r', ...who]);
    expect((await control(['resume', 'cli-r', ...who])).stdout).toMatch(/^resumed cli-r at /);
    expect((await listAudit(db, { queue: 'cli-r' })).map((e) => e.verb)).toEqual(['resume', 'pause', 'redrive', 'dead-letter', 'retry', 'dead-letter']);
  });

  it('sets a per-key cap, sequences and key weights, shows them, and audits each with before and after; exit 0', async () => {
    await enqueue(db, 'tenants', {}, { fairnessKey: 'acct-1' });
    await control(['limit', 'tenants', '--max-in-flight', '10', ...who]);
    // The per-key flags leave the global limits as they were, and each other.
    const capped = await control(['limit', 'tenants', '--max-in-flight-per-key', '4', ...who]);
    expect(capped).toMatchObject({ code: 0, stdout: 'tenants\trunning\tmax-in-flight=10\tmax-starts-per-second=none\tmax-in-flight-per-key=4\tsequential=off\n' });
    expect((await control(['limit', 'tenants', '--sequential', 'on', ...who])).stdout).toMatch(/max-in-flight=10\t.*\tmax-in-flight-per-key=4\tsequential=on\n$/);
    expect(await getQueueControl(db, 'tenants')).toMatchObject({ maxInFlight: 10, maxInFlightPerKey: 4, sequential: true });

    expect((await control(['key-weight', 'tenants', 'acct-1', '3', ...who])).stdout).toBe('tenants\tkey acct-1\tweight=3\n');
    await control(['key-weight', 'tenants', 'acct-2', '7', ...who]);
    expect(await listKeyWeights(db, 'tenants')).toEqual([{ key: 'acct-2', weight: 7 }, { key: 'acct-1', weight: 3 }]);
    expect((await control(['show', 'tenants'])).stdout).toBe(
      'tenants\trunning\tmax-in-flight=10\tmax-starts-per-second=none\tmax-in-flight-per-key=4\tsequential=on\n\tkey acct-2\tweight=7\n\tkey acct-1\tweight=3\n',
    );
    const [shown] = JSON.parse((await control(['show', 'tenants', '--json'])).stdout);
    expect(shown).toMatchObject({ queue: 'tenants', maxInFlightPerKey: 4, sequential: true, keyWeights: [{ key: 'acct-2', weight: 7 }, { key: 'acct-1', weight: 3 }] });

    // "none" takes each back: the key weighs 1 again, the queue is plain (and a weight there is said to do nothing).
    expect((await control(['key-weight', 'tenants', 'acct-2', 'none', ...who])).stdout).toBe('tenants\tkey acct-2\tweight=1 (none set)\n');
    await control(['limit', 'tenants', '--max-in-flight-per-key', 'none', '--sequential', 'off', ...who]);
    expect(await getQueueControl(db, 'tenants')).toMatchObject({ maxInFlight: 10, maxInFlightPerKey: null, sequential: false });
    expect((await control(['key-weight', 'tenants', 'acct-1', '2', ...who])).stdout).toBe(
      'tenants\tkey acct-1\tweight=2 (no effect until tenants has --max-in-flight-per-key or --sequential on)\n',
    );

    const audit = await listAudit(db, { queue: 'tenants' });
    expect(audit.map((e) => e.verb)).toEqual(['set-key-weight', 'set-limits', 'set-key-weight', 'set-key-weight', 'set-key-weight', 'set-limits', 'set-limits', 'set-limits']);
    expect(audit.every((e) => e.actor === 'alice' && e.reason === 'incident 42')).toBe(true);
    expect(audit[4].detail).toEqual({ key: 'acct-1', before: null, after: 3 });
    expect(audit[1].detail).toMatchObject({ before: { maxInFlightPerKey: 4, sequential: true }, after: { maxInFlightPerKey: null, sequential: false } });
  });

  it('exit 2 for bad per-key input, naming the input and what was expected; nothing changes and nothing is audited', async () => {
    await enqueue(db, 'tenants-bad', {}, { fairnessKey: 'acct-1' });
    await control(['limit', 'tenants-bad', '--max-in-flight-per-key', '2', ...who]);
    await control(['key-weight', 'tenants-bad', 'acct-1', '5', ...who]);
    const before = { control: await getQueueControl(db, 'tenants-bad'), weights: await listKeyWeights(db, 'tenants-bad'), audit: await listAudit(db, { queue: 'tenants-bad' }) };
    const refused: [string[], string][] = [
      [['limit', 'tenants-bad', '--max-in-flight-per-key', '0'], '--max-in-flight-per-key: expected an integer >= 1 or "none", got "0"'],
      [['limit', 'tenants-bad', '--max-in-flight-per-key', '1.5'], '--max-in-flight-per-key: expected an integer >= 1 or "none", got "1.5"'],
      [['limit', 'tenants-bad', '--max-in-flight-per-key', '2000000'], 'maxInFlightPerKey: 2000000 is not an integer in [1, 1000000]'],
      [['limit', 'tenants-bad', '--sequential', 'yes'], '--sequential: expected on or off, got "yes"'],
      [['key-weight', 'tenants-bad', 'acct-1', '0'], 'key-weight: expected a weight (an integer in [1, 1000]) or "none", got "0"'],
      [['key-weight', 'tenants-bad', 'acct-1', '1001'], 'key-weight: expected a weight (an integer in [1, 1000]) or "none", got "1001"'],
      [['key-weight', 'tenants-bad', 'acct-1'], 'key-weight: expected a weight (an integer in [1, 1000]) or "none", got none given'],
      [['key-weight', 'tenants-bad'], 'key-weight: expected <queue> <key> <weight|none>'],
      [['key-weight', 'tenants-bad', 'acct-1', '2', 'extra'], 'key-weight: unexpected argument "extra"'],
      [['key-weight', 'tenants-bad', 'k'.repeat(513), '2'], 'key: expected a non-empty string of at most 512 characters'],
      [['key-weight', 'tenants-typo', 'acct-1', '2'], 'set-key-weight queue "tenants-typo": no job, dead letter, schedule or setting names it'],
    ];
    for (const [args, message] of refused) {
      const r = await control([...args, ...who]);
      expect({ args, code: r.code, stderr: r.stderr }).toMatchObject({ code: 2, stderr: expect.stringContaining(message) });
    }
    expect((await control(['key-weight', 'tenants-bad', 'acct-1', '2', '--reason', 'x'])).stderr).toContain('key-weight: --by WHO and --reason WHY are required');
    expect({ control: await getQueueControl(db, 'tenants-bad'), weights: await listKeyWeights(db, 'tenants-bad'), audit: await listAudit(db, { queue: 'tenants-bad' }) }).toEqual(before);
    // The control of this test: the same commands with good input change both, and audit them.
    await control(['limit', 'tenants-bad', '--max-in-flight-per-key', '3', ...who]);
    await control(['key-weight', 'tenants-bad', 'acct-1', '6', ...who]);
    expect(await getQueueControl(db, 'tenants-bad')).toMatchObject({ maxInFlightPerKey: 3 });
    expect(await listKeyWeights(db, 'tenants-bad')).toEqual([{ key: 'acct-1', weight: 6 }]);
    expect((await listAudit(db, { queue: 'tenants-bad' })).length).toBe(before.audit.length + 2);
  });
});
