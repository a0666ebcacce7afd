import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { systemClock } from '../engine/clock.ts';
import type { Db } from '../engine/db.ts';
import { ValidationError } from '../engine/errors.ts';
import { ListenError } from '../engine/http-listener.ts';
import { EsmInCommonJsError, importUserModule } from '../engine/load-module.ts';
import type { Logger } from '../engine/log.ts';
import type { MetricsServer } from '../engine/metrics/index.ts';
import { readMigrations, unappliedMigrations } from '../engine/migrator.ts';
import { redactSecrets } from '../engine/redact.ts';

/** A command-line mistake: the message says which flag and what was expected; exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';

  /** `withUsage` false: the flags were right, the environment was not (the usage text would not help). */
  constructor(
    message: string,
    readonly withUsage = true,
  ) {
    super(message);
  }
}

/** The usage text to print after an error: after a usage error that asks for it, or an option value the engine refused. */
export function usageAfter(err: unknown, usage: string): string {
  return (err instanceof UsageError && err.withUsage) || err instanceof ValidationError ? `${usage}\n` : '';
}

/** A node's exit code for what stopped it: 2 for input it refused (a flag, or an option value the engine refused), else 1. */
export function exitCodeOf(err: unknown): number {
  return err instanceof UsageError || err instanceof ValidationError ? 2 : 1;
}

type Options = NonNullable<ParseArgsConfig['options']>;
type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: boolean; strict: true }>>;

/**
 * parseArgs with our error wording: unknown flags and missing values become UsageError.
 * A negative number after a string flag (`--lease-ms -1`) is taken as that flag's value,
 * so the range check can name it, instead of parseArgs calling it "ambiguous".
 */
export function parseFlags<O extends Options>(argv: string[], options: O, allowPositionals = false): Parsed<O> {
  const joined = joinNegativeValues(argv, options);
  const args = allowPositionals ? negativePositionals(joined) : joined;
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ''));
  }
}

/** A token that is a negative number (`-1`, `-0.5`), which parseArgs would take for a short option. */
const isNegativeNumber = (token: string): boolean => /^-[\d.]/.test(token);

function joinNegativeValues(argv: string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].startsWith('--') ? argv[i].slice(2) : undefined;
    const next = argv[i + 1];
    if (argv[i] === '--') return out.concat(argv.slice(i));
    if (name && options[name]?.type === 'string' && next !== undefined && isNegativeNumber(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else {
      out.push(argv[i]);
    }
  }
  return out;
}

/**
 * A negative number where a positional goes (`control retry -1`) is a positional, so the command's own check names
 * it ("expected a job id"), instead of parseArgs calling it an unknown option. It moves behind a `--`, where parseArgs
 * reads everything as positional; the positionals keep their order unless a later one follows it.
 */
function negativePositionals(args: string[]): string[] {
  const end = args.indexOf('--');
  const flagsPart = end === -1 ? args : args.slice(0, end);
  const negatives = flagsPart.filter(isNegativeNumber);
  if (negatives.length === 0) return args;
  const rest = flagsPart.filter((a) => !isNegativeNumber(a));
  return [...rest, '--', ...negatives, ...(end === -1 ? [] : args.slice(end + 1))];
}

/**
 * Decimal digits, with an optional minus, as a safe integer; undefined for
 * anything else. Number() alone takes "1e3", "0x10" and " 5 ", and rounds a
 * 20-digit job id to some other job's id.
 */
export function integerText(raw: string): number | undefined {
  if (!/^-?\d+$/.test(raw)) return undefined;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A flag's value as an integer >= min, or undefined when absent. */
export function intFlag(values: Record<string, unknown>, name: string, min = 0): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = integerText(String(raw));
  const expected = min === 1 ? 'a positive integer' : min === 0 ? 'an integer >= 0' : `an integer >= ${min}`;
  if (n === undefined || n < min) throw new UsageError(`--${name}: expected ${expected}, got "${String(raw)}"`);
  return n;
}

/** An integer flag from 0 to `max`, refused by its own name; `expected` says the range as the flag's user reads it. */
export function boundedIntFlag(values: Record<string, unknown>, name: string, max: number, expected: string): number | undefined {
  const n = intFlag(values, name);
  if (n !== undefined && n > max) throw new UsageError(`--${name}: expected ${expected}, got "${String(values[name])}"`);
  return n;
}

/** A port flag (`--port`, `--metrics-port`): 0 (the system's choice) to 65535. */
export function portFlag(values: Record<string, unknown>, name: string): number | undefined {
  return boundedIntFlag(values, name, 65_535, '0-65535');
}

/** A ValidationError of an API field that a flag gave (`flagOfField`: field -> flag), named by that flag; anything else as it was. */
export function namedByFlag(err: unknown, flagOfField: Record<string, string>): unknown {
  if (!(err instanceof ValidationError) || !Object.hasOwn(flagOfField, err.field)) return err;
  return new ValidationError(flagOfField[err.field], err.detail);
}

/** An interface address flag (`--host`, `--metrics-host`): refused when given empty, which would bind every interface. */
export function hostFlag(values: Record<string, unknown>, name: string): string | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.trim() === '') throw new UsageError(`--${name}: expected an interface address such as 127.0.0.1 or 0.0.0.0`);
  return v;
}

/** Bind failures that the port flag's value causes, and those that the host flag's value causes. */
const PORT_CODES: Record<string, string> = { EADDRINUSE: 'is in use', EACCES: 'needs privileges this process lacks' };
const HOST_CODES = new Set(['EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_NONAME']);

/**
 * A server that could not bind (ListenError) because of the port or host it was given, as the UsageError naming that
 * flag: a restart cannot mend it, so a supervisor must not retry it. Anything else comes back as it was.
 */
export function listenFlagError(err: unknown, flags: { port: string; host: string }): unknown {
  if (!(err instanceof ListenError) || err.code === undefined) return err;
  if (Object.hasOwn(PORT_CODES, err.code)) {
    return new UsageError(`${flags.port}: port ${err.port} on ${err.host} ${PORT_CODES[err.code]}; expected a free port (0 picks one)`, false);
  }
  if (HOST_CODES.has(err.code)) {
    return new UsageError(`${flags.host}: ${err.host} is not an address of this machine; expected an interface address such as 127.0.0.1 or 0.0.0.0`, false);
  }
  return err;
}

/**
 * Binds a node's /metrics (`--metrics-port`, `--metrics-host`) before the node starts its work, so one that cannot
 * serve it exits having claimed or written nothing; a bind refused for the flags' values is their usage error.
 */
export async function bindMetricsServer(server: MetricsServer | null, db: Db): Promise<void> {
  await server?.start().catch(async (err) => {
    await db.close();
    throw listenFlagError(err, { port: '--metrics-port', host: '--metrics-host' });
  });
}

/** `--help` or `-h` before any `--`: print the usage on stdout and exit 0. */
export function exitOnHelp(argv: string[], usage: string): void {
  const end = argv.indexOf('--');
  const own = end === -1 ? argv : argv.slice(0, end);
  if (own.includes('--help') || own.includes('-h')) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
}

/**
 * Refuses an argument past what `command` takes (`control cancel 1 2`): an
 * operator who typed two ids must not believe both were acted on. A command
 * not in `takes` is left to the caller's own "unknown command".
 */
export function refuseExtraArguments(command: string, args: readonly string[], takes: Readonly<Record<string, number>>): void {
  const n = takes[command];
  if (n === undefined || args.length <= n) return;
  const what = n === 0 ? 'no arguments' : `at most ${n === 1 ? 'one argument' : `${n} arguments`}`;
  throw new UsageError(`${command}: unexpected argument "${args[n]}"; ${command} takes ${what} (one command per job, queue or schedule)`);
}

const DATABASE_URL_SHAPE = 'postgres://user:password@host:port/database';

/** DATABASE_URL, checked for the shape a Postgres client needs; the message never shows the password. */
export function databaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  const raw = env.DATABASE_URL;
  if (!raw) throw new UsageError(`DATABASE_URL is not set; expected ${DATABASE_URL_SHAPE}`);
  const refuse = (why = '') => new UsageError(`DATABASE_URL: expected ${DATABASE_URL_SHAPE}${why}, got ${shownUrl(raw)}`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse();
  }
  // A socket directory may come as ?host=/run/postgresql instead of a host name.
  if (!/^postgres(ql)?:$/.test(url.protocol) || !(url.hostname || url.searchParams.has('host'))) throw refuse();
  // An `@` in the database name or the fragment means a password with an
  // unencoded `/` or `#` (`postgres://u:p/w@host/db` is host "u" and database
  // "w@host/db"): the client would dial a piece of the password and print it
  // in its error. (Not the query: `?application_name=svc@host` is fine.)
  if (/@/.test(url.pathname + url.hash)) throw refuse(' (percent-encode @ / ? # : in the password: %40 %2F %3F %23 %3A)');
  return raw;
}

/**
 * A refused DATABASE_URL as a message may show it: the scheme, the user name
 * and what follows the last `@`, with everything between the user name and
 * that `@` as `***` (a malformed value may hold its password anywhere there).
 * A value without a scheme or an `@` is not shown at all: `postgres://u:pw`
 * or a password pasted into the wrong variable cannot be told from a host.
 */
function shownUrl(raw: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(raw)?.[0];
  const at = raw.lastIndexOf('@');
  if (scheme === undefined || at < scheme.length) return '(not shown: without scheme://user:password@ it may hold a password anywhere)';
  const user = /^[^:]*/.exec(raw.slice(scheme.length, at))![0];
  return `${scheme}${user ? `${user}:` : ''}***@${raw.slice(at + 1)}`;
}

/** A module path given on the command line, resolved against the working directory; refused when absent. */
function existingModule(flag: string, path: string): string {
  const abs = resolve(path);
  if (!existsSync(abs)) throw new UsageError(`${flag} ${path}: no such file (looked for ${abs}); expected a module that exists`);
  return abs;
}

/**
 * Imports the user's module a flag names. One that does not load (a syntax error, an import it cannot resolve, a
 * throw in its top-level code) is that flag's bad input, as a missing file is: exit 2 with the flag and the loader's
 * reason, and under `stampede workers` the fleet stops instead of restarting a process that cannot start.
 */
export async function importModuleFlag(flag: string, path: string): Promise<Record<string, any>> {
  const abs = existingModule(flag, path);
  try {
    return await importUserModule(abs);
  } catch (err) {
    if (err instanceof EsmInCommonJsError) throw new UsageError(`${flag} ${path}: ${err.message}`, false);
    const reason = redactSecrets(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    throw new UsageError(`${flag} ${path}: could not be loaded (${reason}); expected a JavaScript module that imports cleanly`, false);
  }
}

/** An error's message for stderr: redacted, except a UsageError's, which is written redacted (and may show the expected URL shape). */
export function errorText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return err instanceof UsageError ? message : redactSecrets(message);
}

/**
 * Calls `shutdown` once this process's parent is gone. `npx stampede-queue worker` runs us
 * under a shell that a SIGTERM kills without passing it on, which would leave us
 * running orphaned with jobs claimed; we drain instead, as on the signal itself.
 * Returns a function that stops the watch.
 */
export function shutdownWhenOrphaned(shutdown: () => unknown, everyMs = 250): () => void {
  const parent = process.ppid;
  const watch = new AbortController();
  void (async () => {
    while (!watch.signal.aborted) {
      await systemClock.sleep(everyMs, watch.signal).catch(() => {});
      if (!watch.signal.aborted && process.ppid !== parent) {
        void shutdown();
        return;
      }
    }
  })();
  return () => watch.abort();
}

/**
 * Whether a signal is a new interrupt or the same one twice: Ctrl-C under `npm run`
 * reaches us from the terminal and again from npm, which passes it on. A repeat
 * within `windowMs` of the first is the same Ctrl-C.
 */
export function interruptCounter(windowMs = 1000): () => number {
  let count = 0;
  let last = -Infinity;
  return () => {
    const now = systemClock.now();
    if (now - last > windowMs) {
      count++;
      last = now;
    }
    return count;
  };
}

/**
 * A long-running node refuses a database that stampede's migrations have not
 * (all) reached, with one message that says what to run, instead of retrying
 * "relation does not exist" forever. A database it cannot reach yet is not
 * refused: the node starts and its loops retry, as they do after an outage.
 * A node calls it once every flag and option has been judged, so a bad input
 * is named as such, not hidden behind the schema's state.
 */
export async function requireMigrated(db: Db, log: Logger): Promise<void> {
  const migrations = readMigrations();
  let missing: string[];
  try {
    missing = await unappliedMigrations(db, migrations);
  } catch (err) {
    log.warn('could not check the schema; starting anyway', { error: (err as Error).message });
    return;
  }
  if (missing.length === 0) return;
  const what = missing.length === migrations.length ? 'has no stampede schema' : `lacks ${missing.length} of stampede's migrations (${missing[0]} first)`;
  throw new UsageError(`DATABASE_URL: the database ${what}; expected a migrated one: run \`npx stampede-queue migrate\` first`, false);
}
