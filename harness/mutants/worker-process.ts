// A worker process running a mutant, for the harness and the tests:
//   tsx harness/mutants/worker-process.ts --mutant NAME <bin/worker.ts flags>
// Applies the mutant to this process (patched queries, swapped internal
// strategies), then runs the ordinary worker entry, which knows nothing of it.
import { applyMutant, isMutantName, MUTANTS } from './index.ts';

const at = process.argv.indexOf('--mutant');
const name = at < 0 ? undefined : process.argv[at + 1];
if (name === undefined || !isMutantName(name)) {
  process.stderr.write(`stampede mutant worker: --mutant: expected one of ${Object.keys(MUTANTS).join(', ')}, got ${name ?? 'nothing'}\n`);
  process.exit(2);
}
process.argv.splice(at, 2);
applyMutant(name);
process.stderr.write(`stampede mutant worker: running the "${name}" mutant: a deliberately broken engine\n`);
await import('../../bin/worker.ts');
