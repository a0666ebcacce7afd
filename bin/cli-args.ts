import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A command-line mistake: the message says which flag and what was expected; exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** parseArgs with our error wording: unknown flags and missing values become UsageError. */
export function parseFlags<O extends Options>(argv: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ''));
  }
}

/** A flag's value as a non-negative integer, or undefined when absent. */
export function intFlag(values: Record<string, unknown>, name: string, min = 0): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name}: expected an integer >= ${min}, got "${String(raw)}"`);
  return n;
}
