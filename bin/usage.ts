// A command's flags, declared once as data: the parser's options and the --help text both come from it, so a flag
// the parser accepts cannot be missing from the help (test/cli-help.test.ts checks every command against it).

/** One flag: how parseArgs reads it, and what --help says of it. */
export interface FlagSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  /** The value's placeholder in the help (`N`, `DIR`, `ADDR`); a boolean has none. */
  value?: string;
  /** What it does, its unit and its default, in a line or two. */
  help: string;
}

export type FlagTable = Record<string, FlagSpec>;

/** Everything --help prints for a command. */
export interface CommandHelp {
  /** Its usage line(s), without the leading `usage: stampede-queue <command>`. */
  synopsis: string;
  /** Lines between the usage and the flags: subcommands, arguments. */
  intro?: string;
  flags: FlagTable;
  /** The environment variables it reads, each with its meaning. */
  env: Record<string, string>;
  /** Lines after the environment: exit codes, IPC, module shapes. */
  notes?: string;
}

/** The published command name, as the help texts print it. */
export const BIN = 'stampede-queue';

/** The `-h` / `--help` pair every command accepts; exitOnHelp reads it before the parser. */
export const HELP_FLAG = { help: { type: 'boolean', short: 'h', help: 'print this help and exit 0' } } as const satisfies FlagTable;

/** A flag table as parseArgs options, keeping each flag's type so the parsed values are typed. */
type ParserOptions<T extends FlagTable> = {
  [K in keyof T]: { type: T[K]['type']; multiple: T[K]['multiple'] extends true ? true : false; short?: string };
};

/** The parseArgs options of a flag table (declare the table `as const satisfies FlagTable` to keep its types). */
export function parserOptions<T extends FlagTable>(flags: T): ParserOptions<T> {
  return Object.fromEntries(
    Object.entries(flags).map(([name, f]) => [name, { type: f.type, multiple: f.multiple === true, ...(f.short ? { short: f.short } : {}) }]),
  ) as ParserOptions<T>;
}

/** Text indented under a heading, wrapped help aligned past the longest name. */
function table(rows: [string, string][]): string {
  const width = Math.min(28, Math.max(...rows.map(([name]) => name.length)));
  return rows
    .map(([name, text]) => {
      const lines = text.split('\n');
      const head = name.length > width ? `  ${name}\n  ${' '.repeat(width)}  ${lines[0]}` : `  ${name.padEnd(width)}  ${lines[0]}`;
      return [head, ...lines.slice(1).map((l) => `  ${' '.repeat(width)}  ${l}`)].join('\n');
    })
    .join('\n');
}

/** The --help text of `command`: usage, intro, every flag with its meaning and default, the environment, notes. */
export function usageText(command: string, help: CommandHelp): string {
  const flags: FlagTable = { ...help.flags, ...HELP_FLAG };
  const flagRows = Object.entries(flags).map(([name, f]): [string, string] => [
    `${f.short ? `-${f.short}, ` : ''}--${name}${f.value ? ` ${f.value}` : ''}`,
    `${f.help}${f.multiple ? ' (repeatable)' : ''}`,
  ]);
  const envRows = Object.entries(help.env);
  return [
    `usage: ${BIN} ${command}${help.synopsis ? ` ${help.synopsis}` : ''}`,
    ...(help.intro ? [help.intro] : []),
    `\nFlags:\n${table(flagRows)}`,
    `\nEnvironment:\n${envRows.length ? table(envRows) : '  (none)'}`,
    ...(help.notes ? [`\n${help.notes}`] : []),
  ].join('\n');
}
