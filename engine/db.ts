import { createHash } from 'node:crypto';
import pg from 'pg';

// int8 (bigint ids, counts) as JS numbers: ids stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

/** Anything that runs a query: the pool, or a client inside a caller's transaction. A config runs as `prepared` makes it. */
export interface Queryable {
  query<R extends pg.QueryResultRow = any>(text: string | pg.QueryConfig, params?: unknown[]): Promise<pg.QueryResult<R>>;
}

const statementNames = new Map<string, string>();

/**
 * `text` as a named prepared statement: each connection parses and plans it
 * once, and Postgres moves to a generic plan after five runs when that plan
 * costs no more (a statement must be written so that it does: ClaimJobs in
 * engine/worker/worker.sql). For the worker's claim and completion, which run
 * hundreds of times a second, and a single enqueue: planned every time, the
 * claim of 10 jobs and the enqueue spent about as long planning as running
 * (docs/performance.md). The name
 * is a hash of the text, so a changed text is a new statement. A Db built
 * with `preparedStatements: false` runs it unnamed.
 */
export function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let name = statementNames.get(text);
  if (!name) {
    name = `stampede_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}

/**
 * `prepared(text, values)` on a Db, which knows whether its connections keep
 * prepared statements (`preparedStatements`); unnamed on anything else, such
 * as a client inside the caller's own transaction, whose connection (or the
 * pooler behind it) stampede cannot vouch for.
 */
export function preparedOn(db: Queryable, text: string, values: unknown[]): pg.QueryConfig {
  return db instanceof Db ? prepared(text, values) : { text, values };
}

/**
 * How a Db sends a statement given as a QueryConfig, as a table read on every
 * query (the harness's mutants swap an entry: harness/mutants/types.ts
 * INTERNAL_TABLES): a named one goes unnamed on a Db built with
 * `preparedStatements: false`, so its connections prepare nothing.
 */
export const statementShapes = {
  onDb: (config: pg.QueryConfig, options: DbOptions): pg.QueryConfig =>
    config.name && options.preparedStatements === false ? { text: config.text, values: config.values } : config,
};

export interface DbOptions {
  /** Connection string. */
  connectionString: string;
  /** Pool size. Default 10. */
  maxConnections?: number;
  /** application_name reported in pg_stat_activity. Default "stampede". */
  applicationName?: string;
  /**
   * Run the hot statements (the worker's claim and completion, a single enqueue) as named prepared statements
   * (`prepared`). Default true. Turn it off behind
   * a pooler that cannot carry them from one transaction to the next (PgBouncer in transaction mode before 1.21,
   * or with max_prepared_statements = 0).
   */
  preparedStatements?: boolean;
}

/**
 * The one seam between stampede and Postgres: a pool, a transaction helper
 * and nothing else. The engine, the harness and the tests all come through
 * here, so there is no second way in.
 */
export class Db implements Queryable {
  readonly pool: pg.Pool;

  constructor(readonly options: DbOptions) {
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.maxConnections ?? 10,
      application_name: options.applicationName ?? 'stampede',
    });
    // An idle client whose backend was terminated emits 'error' on the pool;
    // unhandled it would crash the process. The next query reconnects.
    this.pool.on('error', () => {});
  }

  query<R extends pg.QueryResultRow = any>(text: string | pg.QueryConfig, params?: unknown[]): Promise<pg.QueryResult<R>> {
    if (typeof text !== 'string') text = statementShapes.onDb(text, this.options);
    return this.pool.query<R>(text as string, params as any[]);
  }

  /** Runs `fn` in one transaction: COMMIT if it resolves, ROLLBACK if it throws. */
  async transaction<T>(fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // The pool stops listening to a client while it is checked out; a backend terminated between two
    // statements would then be an unhandled 'error' and kill the process. The failing query reports it.
    const ignore = () => {};
    client.on('error', ignore);
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw err;
    } finally {
      client.off('error', ignore);
      client.release(broken);
    }
  }

  /**
   * A dedicated connection outside the pool, never handed to anyone else: LISTEN needs one, and so does a
   * session-level lock. `purpose` suffixes its application_name ("stampede:listen").
   */
  async connectDedicated(purpose = 'listen'): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      application_name: `${this.options.applicationName ?? 'stampede'}:${purpose}`,
    });
    client.on('error', () => {});
    await client.connect();
    return client;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
