import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from './log.ts';

/**
 * A server could not bind its address. `code` is the system's (EADDRINUSE, EACCES, EADDRNOTAVAIL, ENOTFOUND...), so a
 * caller can tell a port or host it was given from a failure of the machine.
 */
export class ListenError extends Error {
  override name = 'ListenError';

  constructor(
    what: string,
    readonly host: string,
    readonly port: number,
    readonly code: string | undefined,
    reason: string,
  ) {
    super(`${what} could not listen on ${host}:${port}: ${reason}`);
  }
}

/**
 * A node:http server's lifecycle, shared by the metrics endpoint and the
 * dashboard: start() binds and resolves once listening (a bind error
 * rejects with the address named), stop() closes open connections too, and
 * both survive being called twice.
 */
export class HttpListener {
  private server: Server | null = null;
  private starting: Promise<void> | null = null;

  constructor(
    /** What is served, for log lines and errors ("metrics server", "dashboard"). */
    private readonly what: string,
    private readonly handler: RequestListener,
    private readonly wantedPort: number,
    readonly host: string,
    private readonly log: Logger,
  ) {}

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

  start(): Promise<void> {
    this.starting ??= new Promise<void>((resolve, reject) => {
      const server = createServer(this.handler);
      server.once('error', (err) => {
        this.starting = null;
        reject(new ListenError(this.what, this.host, this.wantedPort, (err as NodeJS.ErrnoException).code, err.message));
      });
      server.listen(this.wantedPort, this.host, () => {
        this.server = server;
        this.log.info(`${this.what} listening`, { host: this.host, port: this.port });
        resolve();
      });
    });
    return this.starting;
  }

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
