import { createServer, type Server } from 'node:http';
import type { Clock } from '../../engine/clock.ts';
import { closeServer, listenLocally } from './local-http.ts';
import type { HistoryRecorder } from './recorder.ts';

/** How the sink treats a key the first time it is delivered, decided by the key alone so a replay behaves the same. */
export type FirstDelivery = 'apply' | 'refuse' | 'hold';

/**
 * What a key's first delivery meets: one key in 8 is refused (503, as a mail
 * API under load answers), one in 64 is held for `holdMs` before it is
 * applied (a slow receiver: the window a relay-kill fault lands in), the rest
 * are applied at once. Holds are rare because a relay pass waits for its
 * slowest delivery: one held key in most batches would cap the relays' rate. A hash of the key, not a draw: the same key meets the
 * same fate in every run.
 */
export function firstDelivery(key: string): FirstDelivery {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619) >>> 0;
  const slot = h % 64;
  return slot < 8 ? 'refuse' : slot === 8 ? 'hold' : 'apply';
}

/**
 * The downstream an outbox relay delivers to: an HTTP server in the harness
 * process that keeps its own idempotency store, as a payment or mail API
 * does, and records every request it gets in the history (outbox:received).
 * A request whose relay goes away before the sink answers (a SIGKILLed
 * relay) is recorded `aborted` and applies nothing. The relays' deliver
 * module (harness/outbox-deliver.ts) sends `POST /deliver?key=K&attempt=N&relay=ID&writer=W`.
 */
export class OutboxSink {
  private server?: Server;
  private readonly applied = new Set<string>();
  private readonly refused = new Set<string>();
  /** Requests open right now, by relay id: what a relay-kill fault looks for. */
  readonly open = new Map<string, number>();

  constructor(
    private readonly recorder: HistoryRecorder,
    private readonly clock: Clock,
    private readonly holdMs = 1_000,
  ) {}

  /** Listens on 127.0.0.1 at a free port; resolves with the base URL. */
  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://sink');
      const key = url.searchParams.get('key') ?? '';
      const attempt = Number(url.searchParams.get('attempt'));
      const relayId = url.searchParams.get('relay') ?? '?';
      const writer = url.searchParams.get('writer') || undefined;
      const record = (outcome: 'applied' | 'duplicate' | 'refused' | 'aborted') =>
        this.recorder.record({ type: 'outbox:received', node: 'outbox-sink', key, attempt, relayId, outcome, ...(writer ? { writer } : {}) });
      const fate = this.applied.has(key) || this.refused.has(key) ? 'apply' : firstDelivery(key);
      if (fate === 'refuse') {
        this.refused.add(key);
        record('refused');
        res.writeHead(503).end('try later');
        return;
      }
      this.open.set(relayId, (this.open.get(relayId) ?? 0) + 1);
      const abort = new AbortController();
      let answered = false;
      res.on('close', () => {
        this.open.set(relayId, (this.open.get(relayId) ?? 1) - 1);
        if (!answered) abort.abort();
      });
      this.clock.sleep(fate === 'hold' ? this.holdMs : 0, abort.signal).then(
        () => {
          answered = true;
          const duplicate = this.applied.has(key);
          this.applied.add(key);
          record(duplicate ? 'duplicate' : 'applied');
          res.writeHead(200).end('ok');
        },
        () => record('aborted'),
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
