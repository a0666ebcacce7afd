// `stampede control` running a mutant (one whose `runsIn` is 'control'):
//   node dist/harness/mutants/control-process.js --mutant NAME <stampede control arguments>
// Applies the mutant to this process (a swapped command of bin/control-commands.ts), then
// runs the ordinary command line entry, which knows nothing of it.
import { applyMutantFromArgv } from './entry.ts';

applyMutantFromArgv('control');
await import('../../bin/control.ts');
