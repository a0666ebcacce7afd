// A worker process running a mutant, for the harness and the tests:
//   node dist/harness/mutants/worker-process.js --mutant NAME <stampede worker flags>
// Applies the mutant to this process (patched queries, swapped internal
// strategies), then runs the ordinary worker entry, which knows nothing of it.
import { applyMutantFromArgv } from './entry.ts';

applyMutantFromArgv('worker');
await import('../../bin/worker.ts');
