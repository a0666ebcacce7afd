import type { RequestListener } from 'node:http';
import type { Clock } from '../clock.ts';
import type { Db } from '../db.ts';
import { HttpListener } from '../http-listener.ts';
import { ValidationError } from '../errors.ts';
import { createLogger, type Logger } from '../log.ts';
import { QueueStateSampler, refuseDepthCapRows, SAMPLER } from '../metrics/queue-state-sampler.ts';
import { checkOptions, declareOptions } from '../options/declare.ts';
import { refuseUnknownKeys } from '../validate.ts';
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

/**
 * The dashboard's options, declared once (engine/options/declare.ts): their defaults, their checks and messages,
 * the `stampede dashboard` flags and --help, and docs/configuration.md's table are derived from this. The token and
 * the public origins are wiring: the token is a secret, which a refusal must never echo (the CLI checks its length
 * without printing it, and it has an environment fallback), and the origins are a list, checked by validateOrigin.
 */
export const DASHBOARD = declareOptions<DashboardConfig>()(
  'DashboardServer',
  {
    port: { type: 'int', min: 0, max: 65_535, default: 7676, defaultText: '7676', flag: 'port', doc: 'TCP port; 0 picks a free one' },
    host: {
      type: 'string', minLength: 1, maxLength: 255, default: '127.0.0.1', flag: 'host',
      doc: 'interface to bind; anything else exposes payloads and control verbs, so say it explicitly',
      note: "'0.0.0.0' or a pod IP, behind TLS: the dashboard shows payloads and can redrive, pause and cancel",
    },
    sloMs: {
      type: 'int', min: 1, unit: 'ms', default: 60_000, flag: 'slo-ms',
      doc: 'the oldest-unclaimed-age objective the queues page compares against',
      note: 'the same 60 s as ops/prometheus/alerts.yml',
    },
    statementTimeoutMs: { type: 'int', min: 1, unit: 'ms', default: 5_000, flag: 'statement-timeout-ms', doc: "longest a page's query may run before it is cancelled" },
    roundRowBudget: { ...SAMPLER.options.roundRowBudget, doc: 'the budget of a round the queues page runs itself (the sampler\'s roundRowBudget)', note: undefined },
    sharedRoundMaxAgeMs: {
      type: 'int', min: 0, unit: 'ms', default: 10_000,
      doc: "the queues page shows the elected sampler's round when it is younger than this, and runs its own only otherwise (0: always its own)",
      note: "two of the sampler's default intervals",
    },
  },
  ['token', 'publicOrigins'],
);

export const DASHBOARD_DEFAULTS = DASHBOARD.defaults;

/**
 * Where a dashboard listens, from the options it was given: the declared defaults for what they leave out. An
 * internal table the package does not export, read at each construction: the harness's mutants swap its entry (a
 * default bound wider, as a refactor might) to show the gate catching a dashboard that does not listen where it is
 * told (harness/mutants/types.ts INTERNAL_TABLES).
 */
export const dashboardAddress = {
  of: (given: Pick<DashboardConfig, 'port' | 'host'>): { port: number; host: string } => ({
    port: given.port ?? DASHBOARD_DEFAULTS.port,
    host: given.host ?? DASHBOARD_DEFAULTS.host,
  }),
};

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
    refuseUnknownKeys(config, DASHBOARD.names, (k) => k, 'a DashboardServer option');
    checkOptions(DASHBOARD, config);
    this.config = {
      ...DASHBOARD_DEFAULTS,
      ...Object.fromEntries(Object.entries(config).filter(([k, v]) => v !== undefined && k !== 'token' && k !== 'publicOrigins')),
      ...dashboardAddress.of(config),
    };
    const publicOrigins = (config.publicOrigins ?? []).map(validateOrigin);
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
