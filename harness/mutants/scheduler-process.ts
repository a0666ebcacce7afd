// A scheduler node running a mutant (one whose `runsIn` is 'scheduler'):
//   tsx harness/mutants/scheduler-process.ts --mutant NAME <bin/scheduler.ts flags>
// Applies the mutant to this process (patched queries), then runs the
// ordinary scheduler entry, which knows nothing of it.
import { applyMutantFromArgv } from './entry.ts';

applyMutantFromArgv('scheduler');
await import('../../bin/scheduler.ts');
