import { systemClock, type Clock } from './clock.ts';
import { redactSecrets } from './redact.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(scope: string): Logger;
}

export interface LoggerOptions {
  /** Times repeats. Default: the system clock. */
  clock?: Clock;
  /** Where lines go. Default: stderr. */
  sink?: (line: string) => void;
  /** A repeat of the same message from the same scope within this long of the last one is folded into a count. Default 60,000 ms. */
  repeatWindowMs?: number;
  /** While a message keeps repeating, its count is printed this often. Default 30,000 ms. */
  summaryEveryMs?: number;
}

function envLevel(): LogLevel {
  const v = process.env.STAMPEDE_LOG as LogLevel | undefined;
  return v && v in ORDER ? v : 'info';
}

/** One message that keeps coming: its first and last time, how often, and the fields it last came with. */
interface Repeat {
  firstMs: number;
  lastMs: number;
  count: number;
  /** Occurrences not yet shown in a printed line. */
  unshown: number;
  printedMs: number;
  tail: string;
}

/**
 * Folds repeats: a warning a loop logs every tick (a node refusing to
 * materialize, a claim failing while the database is down) is printed once,
 * then as one line with a count and the span, `refusing to materialize (x40
 * over 20 s): ...`, every summaryEveryMs while it lasts and once when it stops
 * (another message from the same scope, or the process exits).
 */
const toStderr = (line: string): void => void process.stderr.write(line + '\n');

class RepeatFolder {
  private readonly repeats = new Map<string, Repeat>();

  constructor(
    private readonly clock: Clock,
    private readonly sink: (line: string) => void,
    private readonly windowMs: number,
    private readonly summaryEveryMs: number,
  ) {}

  write(scope: string, head: string, msg: string, tail: string): void {
    const key = `${head}\u0000${scope}\u0000${msg}`;
    const now = this.clock.now();
    this.settle(scope, key, now);
    const r = this.repeats.get(key);
    if (!r || now - r.lastMs > this.windowMs) {
      if (r && r.unshown > 0) this.summary(key, r);
      this.repeats.set(key, { firstMs: now, lastMs: now, count: 1, unshown: 0, printedMs: now, tail });
      this.sink(`${head} ${scope}: ${msg}${tail}`);
      return;
    }
    Object.assign(r, { lastMs: now, count: r.count + 1, unshown: r.unshown + 1, tail });
    if (now - r.printedMs >= this.summaryEveryMs) this.summary(key, r);
  }

  /** Prints every repeat with occurrences not yet shown. */
  flush(): void {
    for (const [key, r] of this.repeats) if (r.unshown > 0) this.summary(key, r);
  }

  /** Another message from a scope ends the runs of its other messages: their counts are printed before it. */
  private settle(scope: string, except: string, now: number): void {
    for (const [key, r] of this.repeats) {
      if (key === except) continue;
      if (key.split('\u0000')[1] === scope && r.unshown > 0) this.summary(key, r);
      if (now - r.lastMs > this.windowMs && r.unshown === 0) this.repeats.delete(key);
    }
  }

  private summary(key: string, r: Repeat): void {
    const [head, scope, msg] = key.split('\u0000');
    const spanS = Math.round((r.lastMs - r.firstMs) / 1000);
    this.sink(`${head} ${scope}: ${msg} (x${r.count} over ${spanS} s)${r.tail.replace(/^ /, ': ')}`);
    r.unshown = 0;
    r.printedMs = r.lastMs;
  }
}

/**
 * Folds the lines of other processes' logs (`LEVEL scope: message`), as a
 * supervisor relays its children's stderr: identical lines from one scope
 * become one line with a count. `scopeOf` may merge scopes (the restarts of
 * one worker slot). Lines that are not log lines pass through as they are.
 */
export function foldLogLines(options: { scopeOf?: (scope: string) => string; clock?: Clock; sink?: (line: string) => void } = {}): (line: string) => void {
  const sink = options.sink ?? toStderr;
  const folder = new RepeatFolder(options.clock ?? systemClock, sink, 60_000, 30_000);
  folders.add(folder);
  return (line) => {
    const m = /^(DEBUG|INFO|WARN|ERROR) ([^\s:]+(?::[^\s:]+)*): (.*)$/.exec(line);
    if (!m) return sink(line);
    folder.write(options.scopeOf ? options.scopeOf(m[2]) : m[2], m[1], m[3], '');
  };
}

const stderrFolder = new RepeatFolder(systemClock, toStderr, 60_000, 30_000);
const folders = new Set<RepeatFolder>([stderrFolder]);
// The last count of a warning that was still repeating when the process ended.
process.once('exit', () => {
  for (const f of folders) f.flush();
});

/**
 * Line-oriented logs on stderr: `LEVEL scope: message key=value`. Every line
 * passes through redactSecrets, so a password in a connection string never
 * reaches a log. Repeats of one message from one scope are folded into one
 * line with a count and a span (see RepeatFolder).
 */
export function createLogger(scope: string, level: LogLevel = envLevel(), options: LoggerOptions = {}): Logger {
  const custom = options.clock || options.sink || options.repeatWindowMs !== undefined || options.summaryEveryMs !== undefined;
  const folder = custom
    ? new RepeatFolder(
        options.clock ?? systemClock,
        options.sink ?? toStderr,
        options.repeatWindowMs ?? 60_000,
        options.summaryEveryMs ?? 30_000,
      )
    : stderrFolder;
  return scopedLogger(scope, level, folder);
}

function scopedLogger(scope: string, level: LogLevel, folder: RepeatFolder): Logger {
  const write = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    const tail = fields
      ? ' ' +
        Object.entries(fields)
          .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join(' ')
      : '';
    folder.write(redactSecrets(scope), lvl.toUpperCase(), redactSecrets(msg), redactSecrets(tail));
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (sub) => scopedLogger(`${scope}:${sub}`, level, folder),
  };
}
