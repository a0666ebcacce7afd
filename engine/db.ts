import pg from 'pg';

// int8 (bigint ids, counts) as JS numbers: ids stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

/** Anything that runs a query: the pool, or a client inside a caller's transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow = any>(text: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
}

export interface DbOptions {
  /** Connection string. */
  connectionString: string;
  /** Pool size. Default 10. */
  maxConnections?: number;
  /** application_name reported in pg_stat_activity. Default "stampede". */
  applicationName?: string;
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

  query<R extends pg.QueryResultRow = any>(text: string, params?: unknown[]): Promise<pg.QueryResult<R>> {
    return this.pool.query<R>(text, params as any[]);
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

  /** A dedicated connection outside the pool (LISTEN needs one that is never handed to anyone else). */
  async connectDedicated(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      application_name: `${this.options.applicationName ?? 'stampede'}:listen`,
    });
    client.on('error', () => {});
    await client.connect();
    return client;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
