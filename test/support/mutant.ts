import { afterEach } from 'vitest';
import { applyMutant, type MutantName } from '../../harness/mutants/index.ts';

let undo = () => {};
// Registered when a test file imports this module, before its own afterEach: after-hooks run in
// reverse, so the real engine comes back only once the file's workers have stopped.
afterEach(() => {
  undo();
  undo = () => {};
});

/** Runs the rest of this test on mutant `name` (in this process); the real engine is restored after it. */
export function useMutant(name: MutantName): void {
  undo = applyMutant(name);
}
