import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { HttpListener } from '../http-listener.ts';
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
  private readonly listener: HttpListener;
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
    this.listener = new HttpListener('metrics server', (req, res) => this.serve(req, res), config.port ?? 0, config.host ?? '127.0.0.1', logger);
  }

  /** True when a port was configured. */
  get enabled(): boolean {
    return this.config.port !== undefined;
  }

  /** The bound port once started (useful with port 0), else null. */
  get port(): number | null {
    return this.listener.port;
  }

  /** The interface address actually bound once started, else null. */
  get boundAddress(): string | null {
    return this.listener.boundAddress;
  }

  get host(): string {
    return this.listener.host;
  }

  /** Binds and listens; resolves once listening. Does nothing when off or already started. */
  start(): Promise<void> {
    return this.enabled ? this.listener.start() : Promise.resolve();
  }

  /** Stops listening and closes open connections. Calling it twice is harmless. */
  stop(): Promise<void> {
    return this.listener.stop();
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
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
  }
}
