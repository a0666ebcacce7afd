import { createLogger } from '../../engine/log.ts';
import { applyMutant, isMutantName, MUTANTS } from './index.ts';
import type { MutantProcess } from './types.ts';

/**
 * For the harness's mutant entries (worker-, scheduler-, relay-, archiver-, control-, dashboard-process.ts):
 * takes `--mutant NAME` out of this process's arguments and applies that
 * mutant here, so the ordinary entry imported next runs the broken engine
 * without knowing it. Exits 2 on a name that is not a mutant.
 */
export function applyMutantFromArgv(role: Exclude<MutantProcess, 'runner'>): void {
  const at = process.argv.indexOf('--mutant');
  const name = at < 0 ? undefined : process.argv[at + 1];
  if (name === undefined || !isMutantName(name)) {
    process.stderr.write(`stampede mutant ${role}: --mutant: expected one of ${Object.keys(MUTANTS).join(', ')}, got ${name ?? 'nothing'}\n`);
    process.exit(2);
  }
  process.argv.splice(at, 2);
  applyMutant(name);
  // A log line (not raw stderr), so the harness folds it with the same line of every restart of a crash loop.
  createLogger(`mutant-${role}`).warn(`running the "${name}" mutant: a deliberately broken engine`);
}
