// `stampede dashboard` running a mutant (one whose `runsIn` is 'dashboard'):
//   node dist/harness/mutants/dashboard-process.js --mutant NAME <stampede dashboard flags>
// Applies the mutant to this process (a swapped entry of an internal table), then runs
// the ordinary command line entry, which knows nothing of it.
import { applyMutantFromArgv } from './entry.ts';

applyMutantFromArgv('dashboard');
await import('../../bin/dashboard.ts');
