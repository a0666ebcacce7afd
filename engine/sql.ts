import { readFileSync } from 'node:fs';

/**
 * Loads named queries from a `.sql` file that sits beside the code running
 * them. A block starts with a `-- name: QueryName` line and runs to the next
 * one. Loaded once at import time, so a typo in a name fails at start-up,
 * not on the first job.
 */
export function loadQueries<const Names extends string>(
  fileUrl: URL,
  names: readonly Names[],
): Record<Names, string> {
  const text = readFileSync(fileUrl, 'utf8');
  const found = new Map<string, string>();
  let current: string | null = null;
  let lines: string[] = [];
  const flush = () => {
    if (current) found.set(current, lines.join('\n').trim());
  };
  for (const line of text.split('\n')) {
    const header = /^--\s*name:\s*(\w+)\s*$/.exec(line);
    if (header) {
      flush();
      current = header[1];
      lines = [];
    } else if (current) {
      lines.push(line);
    }
  }
  flush();
  const out = {} as Record<Names, string>;
  for (const name of names) {
    const sql = found.get(name);
    if (!sql) throw new Error(`query "${name}" not found in ${fileUrl.pathname}`);
    out[name] = sql;
  }
  const extra = [...found.keys()].filter((n) => !names.includes(n as Names));
  if (extra.length) throw new Error(`${fileUrl.pathname} has queries no code names: ${extra.join(', ')}`);
  return out;
}

/** A loaded query as a subquery of another statement: in parentheses, its closing semicolon dropped (a trailing comment stays on its own line). */
export function asSubquery(sql: string): string {
  return `(\n${sql.replace(/;\s*$/, '')}\n)`;
}
