import { afterEach } from 'vitest';
import { NodeProcess } from '../../engine/supervisor/node-process.ts';
import { MUTANT_WORKER_SCRIPT } from '../../harness/mutants/index.ts';

const started: NodeProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.stop(1000)));
});

/** A real worker process on the test database (running mutant `mutant`, if named), stopped after each test. */
export function spawnWorker(url: string, args: string[] = [], handlers = 'test/fixtures/worker-handlers.ts', mutant?: string): NodeProcess {
  const p = new NodeProcess({
    script: mutant ? MUTANT_WORKER_SCRIPT : 'bin/worker.ts',
    args: [...(mutant ? ['--mutant', mutant] : []), '--handlers', handlers, '--poll-ms', '100', ...args],
    env: { DATABASE_URL: url, STAMPEDE_LOG: process.env.STAMPEDE_LOG ?? 'warn' },
    stderr: 'collect',
  });
  started.push(p);
  return p;
}
