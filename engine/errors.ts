/** Input that stampede refused before writing anything. `field` names what was wrong, `detail` what was expected. */
export class ValidationError extends Error {
  override name = 'ValidationError';
  constructor(
    readonly field: string,
    readonly detail: string,
  ) {
    super(`${field}: ${detail}`);
  }
}

/** A worker tried to complete or fail a job whose lease it no longer holds. */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
  constructor(readonly jobId: number) {
    super(`job ${jobId}: lease lost; another worker owns it now, so this result was refused`);
  }
}

/** An operator cancelled the job while its handler ran (engine/control): ctx.signal aborts with this at the next heartbeat. */
export class JobCancelledError extends Error {
  override name = 'JobCancelledError';
  constructor(readonly jobId: number) {
    super(`job ${jobId}: cancelled by an operator; its result will be refused`);
  }
}

/**
 * effectOnce found the job's effect held by another holder's transaction that
 * has not ended (a frozen or stalled worker that lost this job's lease while
 * inside its effect). Nothing was written; the worker hands the job back for
 * a later retry instead of waiting on that holder's locks. Let it propagate.
 */
export class EffectBusyError extends Error {
  override name = 'EffectBusyError';
  constructor(readonly jobId: number) {
    super(`job ${jobId}: its effect is held by another holder's unfinished transaction; the job is handed back to retry later`);
  }
}

/** A handler ran longer than its job timeout. */
export class JobTimeoutError extends Error {
  override name = 'JobTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`handler exceeded its timeout of ${timeoutMs} ms`);
  }
}

/**
 * SQLSTATEs after which the same work may simply be tried again: the
 * connection went away, the server is restarting, or the transaction lost a
 * serialization or deadlock race.
 */
export const RETRYABLE_SQLSTATES: Readonly<Record<string, string>> = {
  '40001': 'serialization_failure',
  '40P01': 'deadlock_detected',
  '57P01': 'admin_shutdown',
  '57P02': 'crash_shutdown',
  '57P03': 'cannot_connect_now',
  '08000': 'connection_exception',
  '08003': 'connection_does_not_exist',
  '08006': 'connection_failure',
  '53300': 'too_many_connections',
  // The primary was demoted or turned read-only (a failover, a managed service's full-disk guard): the same write
  // succeeds once a writable primary answers again.
  '25006': 'read_only_sql_transaction',
};

/** What kind of database trouble an error is: the worker counts and logs each (`stampede_worker_db_errors_total{kind}`). */
export type DbErrorKind = 'read_only' | 'too_many_connections' | 'shutdown' | 'connection' | 'serialization' | 'lock_timeout' | 'canceled';

/** SQLSTATEs by the kind of trouble they mean; anything else from the database (a constraint, a syntax error) is the statement's own fault. */
export const DB_ERROR_KINDS: Readonly<Record<string, DbErrorKind>> = {
  '25006': 'read_only',
  '53300': 'too_many_connections',
  '53400': 'too_many_connections', // configuration_limit_exceeded: a role's or database's own connection limit
  '57P01': 'shutdown',
  '57P02': 'shutdown',
  '57P03': 'shutdown',
  '08000': 'connection',
  '08001': 'connection',
  '08003': 'connection',
  '08004': 'connection',
  '08006': 'connection',
  '40001': 'serialization',
  '40P01': 'serialization',
  '55P03': 'lock_timeout',
  '57014': 'canceled',
};

/**
 * The kind of database trouble `err` is, by its SQLSTATE or, for a connection
 * the driver lost (reset, refused, timed out), by its code or message;
 * undefined for anything else, a handler's own error included.
 */
export function dbErrorKind(err: unknown): DbErrorKind | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (code in DB_ERROR_KINDS) return DB_ERROR_KINDS[code];
    if (RETRYABLE_NODE_CODES.has(code)) return 'connection';
  }
  const message = err instanceof Error ? err.message : '';
  return /Connection terminated|connection is closed|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(message)
    ? 'connection'
    : undefined;
}

const RETRYABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND']);

/** True when an error from a query means "the database went away or lost a race; try again". */
export function isRetryableDbError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (code in RETRYABLE_SQLSTATES || RETRYABLE_NODE_CODES.has(code))) return true;
  const message = err instanceof Error ? err.message : '';
  return /Connection terminated|connection is closed|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(
    message,
  );
}

/** Turns anything a handler threw (an Error, a string, undefined, an object) into a message and a name. */
export function coerceError(thrown: unknown): { name: string; message: string; stack?: string } {
  if (thrown instanceof Error) return { name: thrown.name, message: thrown.message, stack: thrown.stack };
  if (typeof thrown === 'string') return { name: 'NonErrorThrown', message: thrown };
  let text: string;
  try {
    text = JSON.stringify(thrown) ?? String(thrown);
  } catch {
    text = String(thrown);
  }
  return { name: 'NonErrorThrown', message: text };
}
