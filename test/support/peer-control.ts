import { createRequire } from 'node:module';
import { join } from 'node:path';
import { scenarioCli } from './scenario-cli.ts';

/** Whether an npm alias of a peer's release (a known-bug control's) is installed in this checkout. */
export function peerPackageInstalled(name: string): boolean {
  try {
    createRequire(import.meta.url).resolve(`${name}/package.json`);
    return true;
  } catch {
    return false;
  }
}

/**
 * One run of a known-bug control's scenario against one release of a peer (`--peer-package`), through the
 * compiled CLI: its exit code, its JSON report, its invariants by name, its report.md and its stderr.
 */
export async function runControl(scenario: string, engine: string, release: string, outRoot: string, extra: string[] = []) {
  const dir = join(outRoot, release);
  const run = scenarioCli([scenario, '--engine', engine, '--peer-package', release, '--json', '--out', dir, ...extra]);
  const code = await run.code;
  const report = JSON.parse(run.stdout());
  const byName: Record<string, any> = Object.fromEntries(report.invariants.map((i: any) => [i.name, i]));
  return { code, report, byName, dir, stderr: run.stderr() };
}
