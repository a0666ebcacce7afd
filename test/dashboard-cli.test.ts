import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { freshDatabase } from './support/db.ts';

const { url } = await freshDatabase();

interface Cli {
  code: Promise<number | null>;
  /** Resolves with the first stdout line matching `re`. */
  line: (re: RegExp) => Promise<string>;
  stderr: () => string;
  kill: (sig: NodeJS.Signals) => void;
}

const running: Cli[] = [];
afterEach(async () => {
  for (const cli of running.splice(0)) {
    cli.kill('SIGTERM');
    await cli.code;
  }
});

function dashboardCli(args: string[], env: Record<string, string | undefined> = { DATABASE_URL: url }): Cli {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, STAMPEDE_LOG: 'warn' };
  delete childEnv.DATABASE_URL;
  delete childEnv.STAMPEDE_DASHBOARD_TOKEN;
  for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/dashboard.ts', ...args], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString();
    for (const w of [...waiters]) {
      const m = out.split('\n').find((l) => w.re.test(l));
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const code = new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  const cli: Cli = {
    code,
    line: (re) =>
      new Promise((resolve, reject) => {
        waiters.push({ re, resolve });
        void code.then((c) => reject(new Error(`dashboard exited ${c} before printing ${re}:\n${err}`)));
      }),
    stderr: () => err,
    kill: (sig) => child.kill(sig),
  };
  running.push(cli);
  return cli;
}

describe('npm run dashboard', () => {
  it('prints the address with a random token on 127.0.0.1; the page needs it; SIGTERM exits 0', async () => {
    const cli = dashboardCli(['--port', '0']);
    const line = await cli.line(/^stampede dashboard: open /);
    const m = /open (http:\/\/127\.0\.0\.1:(\d+))\/\?token=([\w-]{32})$/.exec(line);
    expect(m).not.toBeNull();
    const [, base, , token] = m!;
    expect((await fetch(`${base}/queues`)).status).toBe(401);
    expect((await fetch(`${base}/queues`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    cli.kill('SIGTERM');
    expect(await cli.code).toBe(0);
  });

  it('takes the token from STAMPEDE_DASHBOARD_TOKEN', async () => {
    const token = 'operator-chosen-token-0123456789';
    const cli = dashboardCli(['--port', '0'], { DATABASE_URL: url, STAMPEDE_DASHBOARD_TOKEN: token });
    const line = await cli.line(/^stampede dashboard: open /);
    expect(line).toMatch(new RegExp(`/\\?token=${token}$`));
  });

  it.each([
    [['--port', 'x'], /--port: expected an integer >= 0, got "x"/],
    [['--port', '70000'], /--port: expected 0-65535, got "70000"/],
    [['--token', 'short'], /--token: expected at least 16 characters/],
    [['--bogus'], /Unknown option '--bogus'/],
    [['--public-origin', 'queue.example.com'], /--public-origin: "queue.example.com" is not an origin/],
  ])('refuses %j with exit 2 and the flag named', async (args, message) => {
    const cli = dashboardCli(args);
    expect(await cli.code).toBe(2);
    expect(cli.stderr()).toMatch(message);
    expect(cli.stderr()).toContain('usage: stampede-queue dashboard');
  });

  it('refuses to start without DATABASE_URL (exit 2)', async () => {
    const cli = dashboardCli([], {});
    expect(await cli.code).toBe(2);
    expect(cli.stderr()).toContain('DATABASE_URL is not set');
  });
});
