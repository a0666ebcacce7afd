import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { createLogger, type Logger } from '../log.ts';
import { validateInt } from '../validate.ts';

export interface MetricsServerConfig {
  /**
   * TCP port for GET /metrics. Undefined (the default) means off: start()
   * does nothing, which is what tests and embedded use want. 0 picks a free
   * port (see `port` after start()).
   */
  port?: number;
  /**
   * Interface to bind. Default 127.0.0.1: metrics name queues and error
   * classes, so they are not published to the network unless an operator
   * says so (e.g. '0.0.0.0' behind a firewall, or a pod IP).
   */
  host?: string;
}

/**
 * Serves the registry as Prometheus text at GET /metrics, over node:http.
 * Scrapes read in-memory values only: queue-state gauges are refreshed by the
 * QueueStateSampler on its own interval, never by a scrape.
 */
export class MetricsServer {
  private server: Server | null = null;
  private starting: Promise<void> | null = null;
  private readonly log: Logger;

  constructor(
    private readonly registry: Registry,
    readonly config: MetricsServerConfig = {},
    logger: Logger = createLogger('metrics:server'),
  ) {
    if (config.port !== undefined) validateInt(config.port, 'port', 0, 65_535);
    if (config.host !== undefined && (typeof config.host !== 'string' || config.host.length === 0)) {
      throw new TypeError(`host: ${String(config.host)} is not an interface address; expected e.g. '127.0.0.1' or '0.0.0.0'`);
    }
    this.log = logger;
  }

  /** True when a port was configured. */
  get enabled(): boolean {
    return this.config.port !== undefined;
  }

  /** The bound port once started (useful with port 0), else null. */
  get port(): number | null {
    const address = this.server?.address();
    return address && typeof address === 'object' ? (address as AddressInfo).port : null;
  }

  /** The interface address actually bound once started, else null. */
  get boundAddress(): string | null {
    const address = this.server?.address();
    return address && typeof address === 'object' ? (address as AddressInfo).address : null;
  }

  get host(): string {
    return this.config.host ?? '127.0.0.1';
  }

  /** Binds and listens; resolves once listening. Does nothing when off or already started. */
  start(): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    this.starting ??= new Promise<void>((resolve, reject) => {
      const server = createServer((req, res) => {
        const path = (req.url ?? '/').split('?')[0];
        if (path !== '/metrics') {
          res.writeHead(404, { 'content-type': 'text/plain' }).end('not found; metrics are at /metrics\n');
          return;
        }
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('use GET\n');
          return;
        }
        this.registry.metrics().then(
          (text) => res.writeHead(200, { 'content-type': this.registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
          (err) => {
            this.log.warn('collecting metrics failed', { error: (err as Error).message });
            res.writeHead(500, { 'content-type': 'text/plain' }).end('collecting metrics failed\n');
          },
        );
      });
      server.once('error', (err) => {
        this.starting = null;
        reject(new Error(`metrics server could not listen on ${this.host}:${this.config.port}: ${err.message}`));
      });
      server.listen(this.config.port, this.host, () => {
        this.server = server;
        this.log.info('serving /metrics', { host: this.host, port: this.port });
        resolve();
      });
    });
    return this.starting;
  }

  /** Stops listening and closes open connections. Calling it twice is harmless. */
  async stop(): Promise<void> {
    if (this.starting) await this.starting.catch(() => {});
    const server = this.server;
    this.server = null;
    this.starting = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
