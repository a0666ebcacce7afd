// An outbox relay running a mutant (one whose `runsIn` is 'relay': the relay or its pruner):
//   node dist/harness/mutants/relay-process.js --mutant NAME <stampede relay flags>
// Applies the mutant to this process (patched queries), then runs the
// ordinary relay entry, which knows nothing of it.
import { applyMutantFromArgv } from './entry.ts';

applyMutantFromArgv('relay');
await import('../../bin/relay.ts');
