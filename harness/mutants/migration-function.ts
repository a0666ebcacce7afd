import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS_DIR } from '../../engine/migrator.ts';
import { editText, type TextEdit } from '../prometheus/ops-files.ts';

/**
 * A function as a (forward-only) migration created it, from its
 * `CREATE FUNCTION <fn>(` to the first `END $$;` after it, as CREATE OR
 * REPLACE: the SQL of a database patch that puts back, or edits, what a
 * migration shipped. `edits` each apply exactly once (editText, as a query
 * patch's do). Throws, naming the mutant, when the migration no longer has it.
 */
export function migrationFunction(mutant: string, migration: string, fn: string, edits: readonly TextEdit[] = []): string {
  const path = join(MIGRATIONS_DIR, migration);
  const text = readFileSync(path, 'utf8');
  const from = text.indexOf(`CREATE FUNCTION ${fn}(`);
  const to = text.indexOf('END $$;', from);
  if (from < 0 || to < 0) throw new Error(`mutant ${mutant}: ${path} has no CREATE FUNCTION ${fn}(...) ... END $$;`);
  const body = text.slice(from, to + 'END $$;'.length).replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION');
  return edits.length ? editText(mutant, `${fn} of migration ${migration}`, body, edits) : body;
}
