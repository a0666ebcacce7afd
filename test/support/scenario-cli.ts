import { spawn } from 'node:child_process';
import { compiledEntry } from '../../engine/supervisor/compiled-entry.ts';

export interface ScenarioCli {
  code: Promise<number | null>;
  stdout: () => string;
  stderr: () => string;
  kill: (sig: NodeJS.Signals) => void;
}

/** Starts `stampede scenario ...args` (the compiled bin on plain node) as a user runs it, with the runner provisioning its own embedded server. */
export function scenarioCli(args: string[]): ScenarioCli {
  const env: NodeJS.ProcessEnv = { ...process.env, STAMPEDE_PG: 'embedded', STAMPEDE_LOG: 'info' };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, [compiledEntry('bin/stampede.ts'), 'scenario', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  return {
    code: new Promise((resolve) => child.on('close', (c) => resolve(c))),
    stdout: () => out,
    stderr: () => err,
    kill: (sig) => child.kill(sig),
  };
}
