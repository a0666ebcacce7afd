import type { RequestListener } from 'node:http';
import type { Clock } from '../clock.ts';
import type { Db } from '../db.ts';
import { HttpListener } from '../http-listener.ts';
import { ValidationError } from '../errors.ts';
import { createLogger, type Logger } from '../log.ts';
import { QUEUE_STATE_SAMPLER_DEFAULTS, QueueStateSampler, refuseDepthCapRows } from '../metrics/queue-state-sampler.ts';
import { validateInt } from '../validate.ts';
import { DashboardAuth, newSecret } from './auth.ts';
import { handleRequest, type RouteDeps } from './routes.ts';

export interface DashboardConfig {
  /** TCP port. Default 7676; 0 picks a free one (see `port` after start()). */
  port?: number;
  /**
   * Interface to bind. Default 127.0.0.1: the dashboard shows payloads and
   * can redrive, pause and cancel, so reaching it from elsewhere is a
   * decision an operator makes explicitly ('0.0.0.0', a pod IP), behind TLS.
   */
  host?: string;
  /**
   * Origins that may POST besides this server's own address (scheme://host[:port], no path): the public
   * address of a TLS proxy in front that rewrites the Host header. Default none.
   */
  publicOrigins?: string[];
  /** The access token every request must carry. Default: a fresh random one (read it from `accessToken`). At least 16 characters. */
  token?: string;
  /** The oldest-unclaimed-age objective the queues page compares against, ms. Default 60,000 (ops/prometheus/alerts.yml). */
  sloMs?: number;
  /** statement_timeout of every query a page runs, ms. Default 5,000. */
  statementTimeoutMs?: number;
  /** The row budget of a round the queues page runs itself (the sampler's roundRowBudget). Default 30,000. */
  roundRowBudget?: number;
  /**
   * The queues page shows the elected sampler's latest round (stampede.queue_state_rounds) when it is younger than
   * this, ms, and runs a round of its own only otherwise. Default 10,000: two of the sampler's default intervals.
   */
  sharedRoundMaxAgeMs?: number;
}

export const DASHBOARD_DEFAULTS = {
  port: 7676,
  host: '127.0.0.1',
  sloMs: 60_000,
  statementTimeoutMs: 5_000,
  roundRowBudget: QUEUE_STATE_SAMPLER_DEFAULTS.roundRowBudget,
  sharedRoundMaxAgeMs: 10_000,
} as const;

/**
 * The operator's web page, served over node:http: queues, job search and
 * detail, dead letters, schedules, and the control verbs as confirmed POSTs.
 * Server-rendered HTML, no script. Every page reads live rows only (see
 * dashboard.sql), so it stays usable however much history the table holds.
 */
export class DashboardServer {
  readonly accessToken: string;
  private readonly listener: HttpListener;
  private readonly config: Required<Omit<DashboardConfig, 'token' | 'publicOrigins'>>;

  constructor(db: Db, clock: Clock, config: DashboardConfig = {}, logger: Logger = createLogger('dashboard')) {
    refuseDepthCapRows(config);
    this.config = {
      ...DASHBOARD_DEFAULTS,
      ...Object.fromEntries(Object.entries(config).filter(([k, v]) => v !== undefined && k !== 'token' && k !== 'publicOrigins')),
    };
    const publicOrigins = (config.publicOrigins ?? []).map(validateOrigin);
    validateInt(this.config.port, 'port', 0, 65_535);
    validateInt(this.config.sloMs, 'sloMs', 1);
    validateInt(this.config.statementTimeoutMs, 'statementTimeoutMs', 1);
    validateInt(this.config.sharedRoundMaxAgeMs, 'sharedRoundMaxAgeMs', 0);
    if (typeof this.config.host !== 'string' || this.config.host.length === 0) {
      throw new TypeError(`host: ${String(this.config.host)} is not an interface address; expected e.g. '127.0.0.1' or '0.0.0.0'`);
    }
    this.accessToken = config.token ?? newSecret();
    const sampler = new QueueStateSampler(db, clock, null, { roundRowBudget: this.config.roundRowBudget, statementTimeoutMs: this.config.statementTimeoutMs }, logger.child('sampler'));
    // The cookie name carries the configured port: cookies are per host, and two dashboards may share one.
    const auth = new DashboardAuth(this.accessToken, `stampede_dashboard_${this.config.port}`, publicOrigins);
    const deps: RouteDeps = { db, clock, auth, sampler, sharedRoundMaxAgeMs: this.config.sharedRoundMaxAgeMs, sloMs: this.config.sloMs, statementTimeoutMs: this.config.statementTimeoutMs, log: logger };
    const serve: RequestListener = (req, res) => {
      handleRequest(deps, req, res).catch((err) => {
        logger.error('dashboard handler crashed', { error: (err as Error).message });
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('internal error\n');
      });
    };
    this.listener = new HttpListener('dashboard', serve, this.config.port, this.config.host, logger);
  }

  get host(): string {
    return this.config.host;
  }

  /** The bound port once started (useful with port 0), else null. */
  get port(): number | null {
    return this.listener.port;
  }

  /** The address to open, token included, once started. */
  get loginUrl(): string {
    const host = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `http://${host}:${this.port}/?token=${encodeURIComponent(this.accessToken)}`;
  }

  /** Binds and listens; resolves once listening. Calling it twice is harmless. */
  start(): Promise<void> {
    return this.listener.start();
  }

  /** Stops listening and closes open connections. Calling it twice is harmless. */
  stop(): Promise<void> {
    return this.listener.stop();
  }
}

/** scheme://host[:port] exactly as a browser sends it in Origin. */
function validateOrigin(value: string): string {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {}
  if (!url || !/^https?:$/.test(url.protocol) || url.origin !== value) {
    throw new ValidationError('publicOrigins', `"${value}" is not an origin; expected scheme://host[:port] with no path, e.g. https://queue.example.com`);
  }
  return value;
}
