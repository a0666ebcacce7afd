import { createServer, type Server } from 'node:http';
import type { Clock } from '../../engine/clock.ts';
import { closeServer, listenLocally } from './local-http.ts';
import type { HistoryRecorder } from './recorder.ts';

export interface DownstreamConfig {
  /** Calls it serves at once; a call that arrives while this many are open is refused (503) after its work time. */
  capacity: number;
  /** How long each call works, ms. */
  callMs: number;
}

/**
 * The dependency a limited queue protects: an HTTP server in the harness
 * process with a known capacity, which fails under overload the way real
 * ones do (it still spends the work, then answers 503). It counts the calls
 * open at its end and records each arrival with that count in the history:
 * the downstream-in-flight checker reads the downstream's own view, and a
 * caller killed mid-call closes its connection, which ends its call here.
 * Handlers (harness/handlers.ts, kind `downstream`) call
 * `GET /call?job=ID&attempt=N`, with `&key=QUEUE/KEY` for a job with a
 * fairnessKey (counted per queue and key as well).
 */
export class Downstream {
  private server?: Server;
  private open = 0;
  /** Calls open per fairnessKey (keyed callers only), for the per-key-limit checker. */
  private openByKey = new Map<string, number>();

  constructor(
    private readonly config: DownstreamConfig,
    private readonly recorder: HistoryRecorder,
    private readonly clock: Clock,
  ) {}

  /** Listens on 127.0.0.1 at a free port; resolves with the base URL. */
  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://downstream');
      const key = url.searchParams.get('key');
      this.open++;
      if (key !== null) this.openByKey.set(key, (this.openByKey.get(key) ?? 0) + 1);
      let ended = false;
      const end = () => {
        if (!ended) {
          this.open--;
          if (key !== null) this.openByKey.set(key, this.openByKey.get(key)! - 1);
        }
        ended = true;
      };
      const abort = new AbortController();
      // The response closing before it was sent: the caller went away (a killed worker, an aborted handler).
      res.on('close', () => {
        if (!ended) abort.abort();
        end();
      });
      const overloaded = this.open > this.config.capacity;
      this.recorder.record({
        type: 'downstream:call',
        node: 'downstream',
        jobId: Number(url.searchParams.get('job')),
        attempt: Number(url.searchParams.get('attempt')),
        inFlight: this.open,
        capacity: this.config.capacity,
        overloaded,
        ...(key !== null ? { key, keyInFlight: this.openByKey.get(key)! } : {}),
      });
      this.clock.sleep(this.config.callMs, abort.signal).then(
        () => {
          end(); // counted out before the caller can hear back, so its next call never overlaps this one
          res.writeHead(overloaded ? 503 : 200, { 'content-type': 'text/plain' });
          res.end(overloaded ? 'overloaded' : 'ok');
        },
        () => end(),
      );
    });
    return listenLocally(this.server);
  }

  /** Closes the server and every connection. Safe to call twice. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await closeServer(server);
  }
}
