// An archiver running a mutant (one whose `runsIn` is 'archiver'):
//   node dist/harness/mutants/archiver-process.js --mutant NAME <stampede archiver flags>
// Applies the mutant to this process (patched queries), then runs the
// ordinary archiver entry, which knows nothing of it.
import { applyMutantFromArgv } from './entry.ts';

applyMutantFromArgv('archiver');
await import('../../bin/archiver.ts');
