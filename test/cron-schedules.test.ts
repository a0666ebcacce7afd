import { execFile, fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { compiledEntry } from '../engine/supervisor/compiled-entry.ts';
import { ManualClock } from '../engine/clock.ts';
import { CronMaterializer } from '../engine/cron/materializer.ts';
import { addSchedule, getSchedule, listSchedules, pauseSchedule, removeSchedule, resumeSchedule } from '../engine/cron/schedule.ts';
import { ValidationError } from '../engine/errors.ts';
import { Events } from '../engine/events.ts';
import { createLogger } from '../engine/log.ts';
import { freshDatabase } from './support/db.ts';

/** The schedule API, the schedules CLI and the scheduler process, against the real Postgres. */

const { db, url } = await freshDatabase();
const MIN = 60_000;
const runAts = async (queue: string) =>
  (await db.query<{ run_at: Date }>('SELECT run_at FROM stampede.jobs WHERE queue = $1 ORDER BY run_at', [queue])).rows.map((r) =>
    r.run_at.toISOString().slice(11, 16),
  );

describe('schedule API', () => {
  it('adds, lists, pauses, resumes and removes; refuses a duplicate id and an unknown one', async () => {
    const s = await addSchedule(db, { id: 'api-1', cron: '0 9 * * mon-fri', timezone: 'Europe/Berlin', queue: 'reports', payload: { report: 'daily' }, priority: 5 });
    expect(s).toMatchObject({ id: 'api-1', enabled: true, dstPolicy: 'shift-first', catchUp: 'none', priority: 5, maxAttempts: null });
    expect((await listSchedules(db)).map((x) => x.id)).toContain('api-1');
    await expect(addSchedule(db, { id: 'api-1', cron: '* * * * *', queue: 'q' })).rejects.toThrow(/^id: schedule "api-1" already exists/);
    expect((await pauseSchedule(db, 'api-1')).enabled).toBe(false);
    expect((await resumeSchedule(db, 'api-1')).enabled).toBe(true);
    await removeSchedule(db, 'api-1');
    expect(await getSchedule(db, 'api-1')).toBeNull();
    const err = await pauseSchedule(db, 'api-1').catch((e) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toMatch(/^id: no schedule "api-1"/);
  });

  it('refuses bad input before writing anything', async () => {
    for (const [input, field] of [
      [{ id: 'bad-1', cron: '* * * *', queue: 'q' }, 'cron'],
      [{ id: 'bad-2', cron: '* * * * *', timezone: 'Nowhere/Town', queue: 'q' }, 'timezone'],
      [{ id: 'bad-3', cron: '* * * * *', queue: 'q', catchUp: 'everything' }, 'catchUp'],
      [{ id: 'bad-4', cron: '* * * * *', queue: 'q', dstPolicy: 'later' }, 'dstPolicy'],
    ] as const) {
      const err = await addSchedule(db, input as any).catch((e) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.field).toBe(field);
    }
    expect((await listSchedules(db)).filter((s) => s.id.startsWith('bad-'))).toEqual([]);
  });

  it('a pause skips what falls due while paused; resume carries on from then, without catch-up', async () => {
    const t0 = Date.parse('2026-08-01T10:00:00Z');
    await addSchedule(db, { id: 'paused', cron: '*/5 * * * *', queue: 'cron-pause', catchUp: 'all' }, { startAt: new Date(t0) });
    const clock = new ManualClock(t0);
    const m = new CronMaterializer({
      db,
      nodeId: 'pause-node',
      clock,
      events: new Events(),
      tickMs: 30_000,
      lookaheadMs: 2 * MIN,
      maxSkewMs: 30_000,
      dbNow: async () => clock.now(),
      log: createLogger('t', 'silent'),
    });
    const tickTo = async (hhmm: string) => {
      while (clock.now() < Date.parse(`2026-08-01T${hhmm}:00Z`)) {
        clock.advance(30_000);
        await m.runOnce();
      }
    };
    await tickTo('10:06');
    await pauseSchedule(db, 'paused');
    await tickTo('10:31');
    await resumeSchedule(db, 'paused', new Date(clock.now()));
    await tickTo('10:41');
    // 10:05 before the pause (the last tick's horizon was 10:08); nothing from 10:10 to 10:30; from 10:35 on again.
    expect(await runAts('cron-pause')).toEqual(['10:05', '10:35', '10:40']);
    await pauseSchedule(db, 'paused');
  });
});

const run = promisify(execFile);
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [compiledEntry('bin/stampede.ts'), 'schedules', ...args], { env: { ...process.env, DATABASE_URL: url } });
    return { code: 0, stdout, stderr };
  } catch (err: any) {
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('schedules CLI', () => {
  // Each run starts a node process (about a second on a loaded machine), so independent runs go in parallel.
  it('adds, lists, pauses and removes; bad input exits 2 naming the flag', async () => {
    const [added, bad] = await Promise.all([
      cli('add', 'cli-1', '--cron', '30 2 * * *', '--tz', 'America/New_York', '--queue', 'nightly', '--payload', '{"x":1}', '--catch-up', 'latest'),
      cli('add', 'cli-2', '--cron', '30 2 * * *', '--tz', 'America/Nowhere', '--queue', 'nightly'),
    ]);
    expect(added).toMatchObject({ code: 0 });
    expect(added.stdout).toMatch(/^added cli-1\t30 2 \* \* \*\tAmerica\/New_York\tqueue=nightly\tdst=shift-first\tcatch-up=latest\tenabled/);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--tz: "America\/Nowhere" is not a known IANA time zone/);
    const [paused, listed] = await Promise.all([cli('pause', 'cli-1'), cli('list')]);
    expect(paused.stdout).toMatch(/^paused cli-1\t.*\tpaused\t/);
    expect(listed.stdout).toMatch(/^cli-1\t30 2/m);
    expect((await getSchedule(db, 'cli-1'))?.payload).toEqual({ x: 1 });
    expect((await cli('remove', 'cli-1')).stdout).toBe('removed cli-1\n');
    expect(await getSchedule(db, 'cli-1')).toBeNull();
  });
});

describe('scheduler process', () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });
  const start = (env: Record<string, string>, ...args: string[]) => {
    const child = fork(compiledEntry('bin/scheduler.ts'), args, { execArgv: [], env: { ...process.env, DATABASE_URL: url, STAMPEDE_LOG: 'silent', ...env }, stdio: 'pipe' });
    children.push(child);
    return child;
  };
  const nextEvent = (child: ChildProcess, name: string, scheduleId?: string) =>
    new Promise<any>((resolve, reject) => {
      // A node ships its events in batches (engine/supervisor/event-shipper.ts): one message may carry several.
      const matches = (e: any) => e?.kind === 'event' && e.name === name && (!scheduleId || e.payload.scheduleId === scheduleId);
      child.on('message', (m: any) => {
        const found = (m?.kind === 'events' ? m.events : [m]).find(matches);
        if (found) resolve(found);
      });
      child.once('exit', (code) => reject(new Error(`scheduler exited (${code}) before ${name}`)));
    });

  it('materializes with the real clocks, forwards its events over IPC and stops on request', async () => {
    await addSchedule(db, { id: 'proc-every-minute', cron: '* * * * *', queue: 'cron-proc' });
    const child = start({}, '--node-id', 'proc-a', '--tick-ms', '1000');
    const msg = await nextEvent(child, 'cron:materialized', 'proc-every-minute');
    expect(msg).toMatchObject({ kind: 'event', name: 'cron:materialized', payload: { scheduleId: 'proc-every-minute', nodeId: 'proc-a', occurrences: 1 } });
    expect(typeof msg.nodeTime).toBe('number');
    child.send({ kind: 'stop' });
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect((await runAts('cron-proc')).length).toBeGreaterThanOrEqual(1);
  });

  it('with STAMPEDE_CLOCK_SKEW_MS beyond --max-skew-ms it refuses, reporting the skew it measured, until its clock is stepped back', async () => {
    const child = start({ STAMPEDE_CLOCK_SKEW_MS: '600000' }, '--node-id', 'proc-skewed', '--max-skew-ms', '5000', '--tick-ms', '1000');
    const msg = await nextEvent(child, 'cron:refused');
    expect(msg.payload.nodeId).toBe('proc-skewed');
    expect(Math.abs(msg.payload.skewMs - 600_000)).toBeLessThan(5_000);
    // Stepping the clock back over IPC ends the refusal: it materializes a schedule added meanwhile.
    await addSchedule(db, { id: 'proc-after-jump', cron: '* * * * *', queue: 'cron-proc-jump' });
    const materialized = nextEvent(child, 'cron:materialized', 'proc-after-jump');
    child.send({ kind: 'clock:jump', deltaMs: -600_000 });
    expect((await materialized).payload).toMatchObject({ nodeId: 'proc-skewed', occurrences: 1 });
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });

  it('refuses a bad flag naming it', async () => {
    const child = start({}, '--tick-ms', 'soon');
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(stderr).toMatch(/--tick-ms: expected a positive integer, got "soon"/);
  });
});
