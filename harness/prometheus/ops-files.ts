import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The operator files stampede ships (package.json `files`), which the runner loads into its Prometheus and queries. */
export const OPS_FILES = ['ops/prometheus/alerts.yml', 'ops/grafana/stampede.json'] as const;
export type OpsFile = (typeof OPS_FILES)[number];

/** One textual edit: `find` must occur exactly once in the text, and is replaced by `replace`. */
export interface TextEdit {
  find: string;
  replace: string;
}

/**
 * INTERNAL. Edits a mutant makes to an ops file as the runner loads it (a
 * rule threshold written wrong, a panel on a renamed metric): the shipped
 * files on disk are never touched. Nothing but harness/mutants/apply.ts
 * assigns to it.
 */
export const opsFileEdits: Partial<Record<OpsFile, { mutant: string; edits: TextEdit[] }>> = {};

/**
 * `text` with each edit of mutant `mutant` made. Throws, naming it and `where`, when an edit's
 * `find` is not there exactly once or the edits change nothing: what it was
 * meant to break changed under it, and the mutant must be rewritten rather
 * than silently test the real thing.
 */
export function editText(mutant: string, where: string, text: string, edits: readonly TextEdit[]): string {
  let out = text;
  for (const { find, replace } of edits) {
    const count = out.split(find).length - 1;
    if (count !== 1) {
      throw new Error(
        `mutant ${mutant}: expected this text exactly once in ${where}, found it ${count} times; ` +
          `production changed under the mutant, so update harness/mutants/${mutant}.ts:\n${find}`,
      );
    }
    out = out.replace(find, () => replace);
  }
  if (out === text) throw new Error(`mutant ${mutant}: its patch of ${where} changes nothing`);
  return out;
}

/** The package's root: where ops/ is, from the source tree (harness/prometheus) or the build (dist/harness/prometheus). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++, dir = dirname(dir)) if (existsSync(join(dir, OPS_FILES[0]))) return dir;
  throw new Error(`cannot find ${OPS_FILES[0]} above ${fileURLToPath(import.meta.url)}`);
}

/** The shipped file's text, exactly as it is on disk. */
export function shippedOpsText(file: OpsFile): string {
  return readFileSync(join(packageRoot(), file), 'utf8');
}

/**
 * What the runner loads for `file`: a team's own version when `override` names
 * one (`--alert-rules`, `--grafana-dashboard`), else the shipped one; with a
 * mutant's edits made, when one applies to it. `source` says which, for messages.
 */
export function loadOpsFile(file: OpsFile, override?: string): { text: string; source: string } {
  const source = override ? resolve(override) : file;
  let text: string;
  try {
    text = override ? readFileSync(source, 'utf8') : shippedOpsText(file);
  } catch (err) {
    throw new Error(`${source}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const patch = opsFileEdits[file];
  return { text: patch ? editText(patch.mutant, source, text, patch.edits) : text, source };
}
