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

function envLevel(): LogLevel {
  const v = process.env.STAMPEDE_LOG as LogLevel | undefined;
  return v && v in ORDER ? v : 'info';
}

/**
 * Line-oriented logs on stderr: `LEVEL scope: message key=value`. Every line
 * passes through redactSecrets, so a password in a connection string never
 * reaches a log.
 */
export function createLogger(scope: string, level: LogLevel = envLevel()): Logger {
  const write = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    const tail = fields
      ? ' ' +
        Object.entries(fields)
          .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join(' ')
      : '';
    process.stderr.write(redactSecrets(`${lvl.toUpperCase()} ${scope}: ${msg}${tail}`) + '\n');
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (sub) => createLogger(`${scope}:${sub}`, level),
  };
}
