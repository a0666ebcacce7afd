import { existsSync } from 'node:fs';
import { createLogger, type Logger } from '../../engine/log.ts';
import { redactSecrets } from '../../engine/redact.ts';
import { EmbeddedPostgres } from './embedded.ts';

/** A real PostgreSQL server that stampede may create databases on. */
export interface PostgresServer {
  /** Where it came from: the user's DATABASE_URL, a testcontainer, or an embedded server we started. */
  readonly kind: 'url' | 'container' | 'embedded';
  /** A URL with rights to CREATE DATABASE. */
  readonly adminUrl: string;
  /** Stops what we started; a no-op for a server we were given. Safe to call twice. */
  stop(): Promise<void>;
  /** Only on servers we own: SIGKILL the postmaster (a crash), and start it again on the same data. */
  crash?(): Promise<void>;
  /** The postmaster's OS pid, on servers we own: a crash and restart changes it. */
  readonly pid?: number;
  /** What the server printed while starting last, on servers we own (after a crash: its recovery). */
  readonly startLog?: string;
  halt?(mode: 'fast' | 'immediate'): Promise<void>;
  /** Only on servers we own: SIGSTOP the WAL writer until the crash() that must follow (see EmbeddedPostgres); its pid, or undefined if not found. */
  stallWalWriter?(): number | undefined;
  restart?(): Promise<void>;
  /** Only on servers we own: SIGSTOP every server process (the db-pause fault); returns their pids. resume() must follow. */
  pause?(): number[];
  /** SIGCONT every server process; safe when not paused. */
  resume?(): void;
}

export interface ProvisionOptions {
  log?: Logger;
  /** Force a source instead of DATABASE_URL → Docker → embedded. Also read from STAMPEDE_PG. */
  prefer?: 'url' | 'container' | 'embedded';
  /** Extra server settings for a server we start. */
  settings?: Record<string, string | number>;
  /**
   * Stop the server and exit on SIGINT/SIGTERM. Default true. A caller that
   * handles the signals itself (the scenario runner writes a partial report
   * first) passes false and must call stop(); the reaper still covers a crash.
   */
  exitOnSignals?: boolean;
}

/** True when a Docker engine answers on its socket within a second; never throws, never hangs. */
async function dockerAnswers(): Promise<boolean> {
  const socket = process.env.DOCKER_HOST?.replace(/^unix:\/\//, '') ?? '/var/run/docker.sock';
  if (!process.env.DOCKER_HOST && !existsSync(socket)) return false;
  const { request } = await import('node:http');
  return new Promise((resolve) => {
    const req = request({ socketPath: socket, path: '/_ping', timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

async function startContainer(log: Logger): Promise<PostgresServer> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const container = await new PostgreSqlContainer('postgres:18').start();
  log.info('PostgreSQL testcontainer started', { image: 'postgres:18' });
  let stopped = false;
  return {
    kind: 'container',
    adminUrl: container.getConnectionUri(),
    async stop() {
      if (stopped) return;
      stopped = true;
      await container.stop();
    },
  };
}

/**
 * Chooses the real server a test, scenario or benchmark uses, and logs which:
 *  1. DATABASE_URL, if set;
 *  2. a testcontainers Postgres, if a Docker engine answers;
 *  3. an embedded PostgreSQL from npm, in a temp dir we remove on exit.
 */
export async function provisionPostgres(options: ProvisionOptions = {}): Promise<PostgresServer> {
  const log = options.log ?? createLogger('postgres');
  const prefer = options.prefer ?? (process.env.STAMPEDE_PG as ProvisionOptions['prefer']);
  const url = process.env.DATABASE_URL;
  if ((prefer === undefined || prefer === 'url') && url) {
    log.info('using the server in DATABASE_URL', { url: redactSecrets(url) });
    return { kind: 'url', adminUrl: url, stop: async () => {} };
  }
  if (prefer === 'url') throw new Error('STAMPEDE_PG=url but DATABASE_URL is not set');
  if (prefer === 'container') return startContainer(log);
  // testcontainers is a development dependency: an installed stampede without it uses the embedded server.
  if (prefer === undefined && (await dockerAnswers()) && (await import('@testcontainers/postgresql').then(() => true, () => false))) {
    return startContainer(log);
  }
  const server = new EmbeddedPostgres({ log, settings: options.settings });
  if (options.exitOnSignals ?? true) stopOnSignals(server);
  try {
    await server.start();
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}

const owned = new Set<{ stop(): Promise<void> }>();
let handlersInstalled = false;

/**
 * On SIGINT/SIGTERM stop every server we started, then exit with the
 * conventional 128+signal code. (A SIGKILL is handled by the reaper.)
 */
function stopOnSignals(server: { stop(): Promise<void> }): void {
  owned.add(server);
  if (handlersInstalled) return;
  handlersInstalled = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void Promise.allSettled([...owned].map((s) => s.stop())).then(() =>
        process.exit(signal === 'SIGINT' ? 130 : 143),
      );
    });
  }
}
