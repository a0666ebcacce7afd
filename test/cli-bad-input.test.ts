// Bad input through the real CLI (the compiled bin on plain node): exit 2, and a
// message that names the input and what was expected, without the password.
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { Db } from '../engine/db.ts';
import { enqueue } from '../engine/enqueue.ts';
import { migrate } from '../engine/migrator.ts';
import { compiledEntry } from '../engine/supervisor/compiled-entry.ts';
import { createDatabase, dropDatabase } from '../harness/postgres/databases.ts';

const run = promisify(execFile);
const BIN = compiledEntry('bin/stampede.ts');

async function stampede(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const fullEnv: NodeJS.ProcessEnv = { ...process.env, STAMPEDE_LOG: 'warn', ...env };
  if (!('DATABASE_URL' in env)) delete fullEnv.DATABASE_URL;
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { env: fullEnv });
    return { code: 0, stdout, stderr };
  } catch (err: any) {
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

const SOME_DB = { DATABASE_URL: 'postgres://u:pw@127.0.0.1:5432/db' };

describe('stampede CLI: bad input exits 2 naming the input', () => {
  it('a negative number as a flag value, with or without =', async () => {
    const [spaced, joined, lease] = await Promise.all([
      stampede(['scenario', 'steady', '--duration', '-5']),
      stampede(['scenario', 'steady', '--duration=-5']),
      stampede(['worker', '--handlers', 'test/fixtures/cli-handlers.mjs', '--lease-ms', '-1'], SOME_DB),
    ]);
    for (const r of [spaced, joined]) expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining('--duration: expected a positive integer, got "-5"') });
    expect(lease).toMatchObject({ code: 2, stderr: expect.stringContaining('--lease-ms: expected a positive integer, got "-1"') });
    for (const r of [spaced, joined, lease]) expect(r.stderr).not.toContain('ambiguous');
  });

  it('a number in any spelling but decimal digits, or past 2^53, is refused before the database is asked', async () => {
    const by = ['--by', 'a', '--reason', 'b'];
    const [huge, exp, hex, concurrency, inFlight, priority, tick, negative] = await Promise.all([
      stampede(['control', 'cancel', '99999999999999999999999', ...by], SOME_DB),
      stampede(['control', 'cancel', '1e3', ...by], SOME_DB),
      stampede(['control', 'cancel', '0x10', ...by], SOME_DB),
      stampede(['worker', '--handlers', 'test/fixtures/cli-handlers.mjs', '--concurrency', '1e2'], SOME_DB),
      stampede(['control', 'limit', 'q', '--max-in-flight', '2.5', '--new', ...by], SOME_DB),
      stampede(['schedules', 'add', 's', '--cron', '* * * * *', '--queue', 'q', '--priority', '1e0'], SOME_DB),
      stampede(['scheduler', '--tick-ms', '0x20'], SOME_DB),
      stampede(['control', 'retry', '-1', ...by], SOME_DB),
    ]);
    // A 23-digit id read as a float would be 1e+23, and cancel some other job's id.
    expect(huge).toMatchObject({ code: 2, stderr: expect.stringContaining('cancel: expected a job id (an integer >= 1), got "99999999999999999999999"') });
    expect(exp).toMatchObject({ code: 2, stderr: expect.stringContaining('got "1e3"') });
    expect(hex).toMatchObject({ code: 2, stderr: expect.stringContaining('got "0x10"') });
    expect(concurrency).toMatchObject({ code: 2, stderr: expect.stringContaining('--concurrency: expected a positive integer, got "1e2"') });
    expect(inFlight).toMatchObject({ code: 2, stderr: expect.stringContaining('--max-in-flight: expected an integer >= 1 or "none", got "2.5"') });
    expect(priority).toMatchObject({ code: 2, stderr: expect.stringContaining('--priority: "1e0" is not an integer') });
    expect(tick).toMatchObject({ code: 2, stderr: expect.stringContaining('--tick-ms: expected a positive integer, got "0x20"') });
    // A negative id is the command's positional, not an unknown option '-1'.
    expect(negative).toMatchObject({ code: 2, stderr: expect.stringContaining('retry: expected a job id (an integer >= 1), got "-1"') });
  });

  it('a node started on a database stampede was never migrated to: exit 2 saying to migrate, not a loop of missing relations', async () => {
    const admin = inject('pgAdminUrl');
    const name = `stampede_unmigrated_${process.pid}`;
    await dropDatabase(admin, name);
    const url = await createDatabase(admin, name);
    onTestFinished(() => dropDatabase(admin, name));
    const env = { DATABASE_URL: url };
    const results = await Promise.all([
      stampede(['worker', '--handlers', 'test/fixtures/cli-handlers.mjs'], env),
      stampede(['scheduler'], env),
      stampede(['archiver'], env),
      stampede(['relay', '--deliver', compiledEntry('harness/outbox-deliver.ts')], env),
    ]);
    for (const r of results) {
      expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining('DATABASE_URL: the database has no stampede schema; expected a migrated one: run `npx stampede-queue migrate` first') });
      expect(r.stderr, 'no usage text: the flags were right').not.toContain('usage:');
    }
    // A bad flag is named as such on that same database: every input is judged before the schema is.
    const [worker, scheduler, archiver, relay] = await Promise.all([
      stampede(['worker', '--handlers', 'test/fixtures/cli-handlers.mjs', '--lease-ms', '1000', '--heartbeat-ms', '1000'], env),
      stampede(['scheduler', '--lookahead-ms', 'soon'], env),
      stampede(['archiver', '--batch-size', '0'], env),
      stampede(['relay', '--deliver', compiledEntry('harness/outbox-deliver.ts'), '--poll-ms', 'x'], env),
    ]);
    expect(worker).toMatchObject({ code: 2, stderr: expect.stringContaining('heartbeatMs: 1000 ms is not shorter than queue') });
    expect(scheduler).toMatchObject({ code: 2, stderr: expect.stringContaining('--lookahead-ms: expected a positive integer, got "soon"') });
    expect(archiver).toMatchObject({ code: 2, stderr: expect.stringContaining('--batch-size: expected a positive integer, got "0"') });
    expect(relay).toMatchObject({ code: 2, stderr: expect.stringContaining('--poll-ms: expected a positive integer, got "x"') });
    for (const r of [worker, scheduler, archiver, relay]) expect(r.stderr).not.toContain('migrate');
  });

  it("the scheduler's durations out of range are refused by their flags, not by the option names of the API", async () => {
    const [tick, skew, window] = await Promise.all([
      stampede(['scheduler', '--tick-ms', '0'], SOME_DB),
      stampede(['scheduler', '--max-skew-ms', '-1'], SOME_DB),
      stampede(['scheduler', '--catch-up-window-ms', '604800001'], SOME_DB),
    ]);
    expect(tick).toMatchObject({ code: 2, stderr: expect.stringContaining('--tick-ms: expected a positive integer, got "0"') });
    expect(skew).toMatchObject({ code: 2, stderr: expect.stringContaining('--max-skew-ms: expected an integer >= 0, got "-1"') });
    expect(window).toMatchObject({ code: 2, stderr: expect.stringContaining('--catch-up-window-ms: expected at most 604800000 (7 days), got "604800001"') });
    for (const r of [tick, skew, window]) expect(r.stderr).not.toMatch(/tickMs|maxSkewMs|catchUpWindowMs/);
  });

  it("schedules add and the scheduler name the flag a refused value came from, not the API's field", async () => {
    const add = (...flags: string[]) => stampede(['schedules', 'add', 's', '--cron', '* * * * *', '--queue', 'q', ...flags], SOME_DB);
    const [zone, attempts, dst, catchUp, queue, node] = await Promise.all([
      add('--tz', 'Mars/Base'),
      add('--max-attempts', '0'),
      add('--dst-policy', 'nope'),
      add('--catch-up', 'x'),
      stampede(['schedules', 'add', 's', '--cron', '* * * * *', '--queue', ''], SOME_DB),
      stampede(['scheduler', '--node-id', ''], SOME_DB),
    ]);
    expect(zone).toMatchObject({ code: 2, stderr: expect.stringContaining('--tz: "Mars/Base" is not a known IANA time zone') });
    expect(attempts).toMatchObject({ code: 2, stderr: expect.stringContaining('--max-attempts: 0 is not an integer in [1, 1000]') });
    expect(dst).toMatchObject({ code: 2, stderr: expect.stringContaining('--dst-policy: "nope" is not a DST policy') });
    expect(catchUp).toMatchObject({ code: 2, stderr: expect.stringContaining('--catch-up: "x" is not a catch-up policy') });
    expect(queue).toMatchObject({ code: 2, stderr: expect.stringContaining('--queue: expected a non-empty string') });
    expect(node).toMatchObject({ code: 2, stderr: expect.stringContaining('--node-id: expected a name for this node, got ""') });
    for (const r of [zone, attempts, dst, catchUp, queue, node]) expect(r.stderr).not.toMatch(/timezone:|maxAttempts|dstPolicy|catchUp:|nodeId/);
  });

  it('a handlers module that does not exist: the path is named', async () => {
    const r = await stampede(['worker', '--handlers', './no/such-handlers.js'], SOME_DB);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--handlers ./no/such-handlers.js: no such file');
  });

  it('a module that does not load is bad input to its flag: the reason the loader gave, no stack, no secret', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stampede-cli-modules-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const broken = join(dir, 'handlers.mjs');
    writeFileSync(broken, 'export default { email: async () => { }\n');
    const throwing = join(dir, 'deliver.mjs');
    writeFileSync(throwing, "throw new Error('no route to postgres://svc:hunter2@10.0.0.1/outbox');\n");
    const [worker, relay] = await Promise.all([stampede(['worker', '--handlers', broken], SOME_DB), stampede(['relay', '--deliver', throwing], SOME_DB)]);
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain(`--handlers ${broken}: could not be loaded (SyntaxError: `);
    expect(relay.code).toBe(2);
    expect(relay.stderr).toContain(`--deliver ${throwing}: could not be loaded (Error: no route to postgres://svc:***@10.0.0.1/outbox)`);
    for (const r of [worker, relay]) {
      expect(r.stderr).not.toContain('hunter2');
      expect(r.stderr).not.toMatch(/^\s+at /m);
    }
  });

  it('a TypeScript handlers or scenario module outside an ESM package gives its own default export, not the CommonJS wrapper', async () => {
    // tsx compiles such a file to CommonJS, and Node's interop hands back the whole exports object as the default:
    // read that way the handlers were { default: { email } }, and the queue "email" had no handler.
    const dir = mkdtempSync(join(tmpdir(), 'stampede-cli-modules-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const handlers = join(dir, 'handlers.ts');
    writeFileSync(handlers, 'const email = async (payload: unknown): Promise<void> => {};\nexport default { email };\n');
    const r = await stampede(['worker', '--handlers', handlers, '--queues', 'email,sms'], SOME_DB);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--queues: no handler for queue "sms" in ${handlers}`);
    // The same for a scenario file: its own default export is the scenario (its fields are what is judged), and a file
    // with none says so, where the wrapper read its named exports as the scenario ("scenario.steps: is not a scenario field").
    const scenario = join(dir, 'scenario.ts');
    writeFileSync(scenario, "const workers: number = 2;\nexport default { name: 'ts-outside-esm', workers };\n");
    const noDefault = join(dir, 'no-default.ts');
    writeFileSync(noDefault, 'export const steps: number[] = [1, 2];\n');
    const namedOnly = join(dir, 'named-only.ts');
    writeFileSync(namedOnly, 'export const email = async (payload: unknown): Promise<void> => {};\n');
    const [own, none, handlersNone] = await Promise.all([
      stampede(['scenario', scenario]),
      stampede(['scenario', noDefault]),
      stampede(['worker', '--handlers', namedOnly], SOME_DB),
    ]);
    // As an ESM module with named exports only is refused, so is its CommonJS build (the wrapper ran queue "email").
    expect(handlersNone).toMatchObject({ code: 2, stderr: expect.stringContaining(`--handlers ${namedOnly}: expected a module whose default export is {queue: handler}`) });
    expect(own).toMatchObject({ code: 2, stderr: expect.stringContaining('scenario.description: expected a sentence saying which real failure this reproduces') });
    expect(none).toMatchObject({ code: 2, stderr: expect.stringContaining(`${noDefault}: default export: is missing; expected \`export default defineScenario({ ... })\``) });
    expect(none.stderr).not.toContain('steps');
  });

  it('a malformed DATABASE_URL: the expected shape, the password redacted, for every command that reads it', async () => {
    const bad = { DATABASE_URL: 'postgres://user:s3cret-pw@127.0.0.1:notaport/bars' };
    const results = await Promise.all([
      stampede(['migrate'], bad),
      stampede(['worker', '--handlers', 'test/fixtures/cli-handlers.mjs'], bad),
      stampede(['scenario', 'steady', '--duration', '5'], bad),
    ]);
    for (const r of results) {
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('DATABASE_URL: expected postgres://user:password@host:port/database, got postgres://user:***@127.0.0.1:notaport/bars');
      expect(r.stderr).not.toContain('s3cret-pw');
    }
  });

  it('--queues naming no queue, or one the handlers module lacks, is refused before the worker starts', async () => {
    const [empty, unknown] = await Promise.all([
      stampede(['worker', '--handlers', 'test/fixtures/cli-handlers.mjs', '--queues', ''], SOME_DB),
      stampede(['worker', '--handlers', 'test/fixtures/cli-handlers.mjs', '--queues', 'hold,nosuch'], SOME_DB),
    ]);
    expect(empty).toMatchObject({ code: 2, stderr: expect.stringContaining('--queues: expected a comma-separated list of queue names, got ""') });
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringContaining('--queues: no handler for queue "nosuch" in test/fixtures/cli-handlers.mjs') });
  });

  it('a port past 65535 is refused by the flag that gave it, on every command with one', async () => {
    const [worker, scheduler] = await Promise.all([
      stampede(['worker', '--handlers', 'test/fixtures/cli-handlers.mjs', '--metrics-port', '70000'], SOME_DB),
      stampede(['scheduler', '--metrics-port', '70000'], SOME_DB),
    ]);
    for (const r of [worker, scheduler]) expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining('--metrics-port: expected 0-65535, got "70000"') });
  });

  it('a port in use, or a host that is not this machine, is refused by the flag that gave it, before the worker claims anything', async () => {
    const admin = inject('pgAdminUrl');
    const name = `stampede_busy_port_${process.pid}`;
    await dropDatabase(admin, name);
    const url = await createDatabase(admin, name);
    onTestFinished(() => dropDatabase(admin, name));
    const db = new Db({ connectionString: url, maxConnections: 1 });
    onTestFinished(() => db.close());
    await migrate(db);
    await db.query('CREATE TABLE test_started (job_id bigint)');
    const { id } = await enqueue(db, 'hold', { ms: 0 });
    // The port is really taken: this test holds it for the whole run.
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => holder.close(() => resolve())));
    const busy = String((holder.address() as { port: number }).port);
    const notHere = '203.0.113.5'; // TEST-NET-3: documentation only, never an address of this machine
    const [worker, scheduler, dashboardPort, dashboardHost, metricsHost, emptyHost] = await Promise.all([
      stampede(['worker', '--handlers', 'test/fixtures/cli-handlers.mjs', '--metrics-port', busy], { DATABASE_URL: url }),
      stampede(['scheduler', '--metrics-port', '0', '--metrics-host', notHere], { DATABASE_URL: url }),
      stampede(['dashboard', '--port', busy], { DATABASE_URL: url }),
      stampede(['dashboard', '--port', '0', '--host', notHere], { DATABASE_URL: url }),
      stampede(['worker', '--handlers', 'test/fixtures/cli-handlers.mjs', '--metrics-port', '0', '--metrics-host', notHere], { DATABASE_URL: url }),
      stampede(['worker', '--handlers', 'test/fixtures/cli-handlers.mjs', '--metrics-port', '0', '--metrics-host', ''], { DATABASE_URL: url }),
    ]);
    expect(worker).toMatchObject({ code: 2, stderr: expect.stringContaining(`--metrics-port: port ${busy} on 127.0.0.1 is in use; expected a free port (0 picks one)`) });
    expect(dashboardPort).toMatchObject({ code: 2, stderr: expect.stringContaining(`--port: port ${busy} on 127.0.0.1 is in use`) });
    for (const [r, flag] of [
      [scheduler, '--metrics-host'],
      [dashboardHost, '--host'],
      [metricsHost, '--metrics-host'],
    ] as const) {
      expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining(`${flag}: ${notHere} is not an address of this machine`) });
    }
    expect(emptyHost).toMatchObject({ code: 2, stderr: expect.stringContaining('--metrics-host: expected an interface address such as 127.0.0.1 or 0.0.0.0') });
    // Nothing was claimed on the way out: the job waits untouched, and no handler started.
    const job = (await db.query('SELECT state, attempts FROM stampede.jobs WHERE id = $1', [id])).rows[0];
    expect(job).toEqual({ state: 'pending', attempts: 0 });
    expect((await db.query('SELECT count(*)::int AS n FROM test_started')).rows[0].n).toBe(0);
  });

  it('an argument past what a control or schedules command takes is refused, not ignored', async () => {
    const by = ['--by', 'a', '--reason', 'b'];
    const [cancel, show, list] = await Promise.all([
      stampede(['control', 'cancel', '1', '2', ...by], SOME_DB),
      stampede(['control', 'show', 'a', 'b'], SOME_DB),
      stampede(['schedules', 'list', 'extra'], SOME_DB),
    ]);
    expect(cancel).toMatchObject({ code: 2, stderr: expect.stringContaining('cancel: unexpected argument "2"; cancel takes at most one argument') });
    expect(show).toMatchObject({ code: 2, stderr: expect.stringContaining('show: unexpected argument "b"; show takes at most one argument') });
    expect(list).toMatchObject({ code: 2, stderr: expect.stringContaining('list: unexpected argument "extra"; list takes no arguments') });
  });

  it('stampede workers whose workers refuse their flags exits 2 at once instead of restarting them forever', async () => {
    // The old supervisor restarted them with backoff and never exited: this test then timed out.
    const r = await stampede(['workers', '--processes', '2', '--restart-base-ms', '50', '--', '--handlers', './no/such-handlers.js'], SOME_DB);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('stampede worker: --handlers ./no/such-handlers.js: no such file');
    expect(r.stderr).toContain('stampede workers: a worker refused its flags or its database (exit 2; its message is above); stopped every worker');
    expect(r.stderr).not.toContain('worker process exited; restarting');
  });

  it('a DATABASE_URL whose password leaks through a naive parse is refused or masked whole, never shown', async () => {
    // Each value holds the secret "w0rd" where the URL parser, a regex
    // redaction or the client's error would expose it: an unencoded "/" (the
    // client dials "ss", a piece of the password), no scheme, no "@" at all.
    const values = ['postgres://u:p@ss/w0rd@127.0.0.1:5432/db', 'u:pw0rd@127.0.0.1:5432/db', 'pw0rd', 'postgres://u:w0rd'];
    const results = await Promise.all(values.flatMap((v) => [stampede(['migrate'], { DATABASE_URL: v }), stampede(['gate', '--only', 'steady'], { DATABASE_URL: v })]));
    for (const [i, r] of results.entries()) {
      const value = values[Math.floor(i / 2)];
      expect(r.code, value).toBe(2);
      expect(r.stderr, value).toContain('DATABASE_URL: expected postgres://user:password@host:port/database');
      expect(r.stderr, value).not.toContain('w0rd');
    }
    expect(results[0].stderr).toContain('percent-encode @ / ? # : in the password');
    expect(results[0].stderr).toContain('got postgres://u:***@127.0.0.1:5432/db');
  });

  it('an @ in the query of a DATABASE_URL is not taken for a password slip', async () => {
    // Refused at the database (nothing listens on port 1), not at the URL check.
    const r = await stampede(['migrate'], { DATABASE_URL: 'postgres://u:pw@127.0.0.1:1/db?application_name=svc@host' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('ECONNREFUSED');
    expect(r.stderr).not.toContain('DATABASE_URL: expected');
  });

  it('--help on the command and on each subcommand exits 0 with its usage; an unknown command exits 2', async () => {
    const names = ['migrate', 'worker', 'workers', 'scheduler', 'schedules', 'relay', 'archiver', 'scenario', 'gate'];
    const [top, unknown, ...subs] = await Promise.all([stampede(['--help']), stampede(['nope']), ...names.map((n) => stampede([n, '--help']))]);
    expect(top).toMatchObject({ code: 0 });
    for (const n of names) expect(top.stdout).toContain(`  ${n} `);
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown command "nope"') });
    subs.forEach((r, i) => expect(r, names[i]).toMatchObject({ code: 0, stdout: expect.stringContaining(`usage: stampede-queue ${names[i]}`) }));
  });
});
