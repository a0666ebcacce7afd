import { connect, createServer, type Server, type Socket } from 'node:net';
import { startTimer, type Clock, type ClockTimer } from '../../engine/clock.ts';
import type { Rng } from '../../engine/rng.ts';
import { firstColumn, parseBind, cstring, WireFramer, type WireMessage } from './wire.ts';

/**
 * The harness's own TCP proxy between one process (a worker, the nemesis's
 * producer) and Postgres: the link the link faults act on. Each client
 * connection is spliced to a fresh upstream connection; both directions pass
 * through a Pipe that can hold bytes (a partition), delay them (latency with
 * jitter), pace them (a bandwidth cap), or both. Connections stay open while
 * held, as TCP's own retransmissions keep a connection open through a
 * partition shorter than its timeout: that is the nasty case, a query that
 * neither answers nor fails. `reset()` destroys every connection with an RST;
 * `armCommitCut(point)` cuts the next connection whose transaction ran a
 * statement of that point, after the server committed it and before the
 * client hears so (see CommitCut).
 *
 * The upstream is a field, not a constant, so a later failover can re-point
 * a proxy at another server (`retarget`): new connections go there.
 */

export type Direction = 'toServer' | 'toClient';
export const DIRECTIONS: readonly Direction[] = ['toServer', 'toClient'];

/** Where a reset-after-commit lands: which of the engine's writes loses its answer. */
export type CommitPoint = 'enqueue' | 'claim' | 'complete' | 'effect';
export const COMMIT_POINTS: readonly CommitPoint[] = ['enqueue', 'claim', 'complete', 'effect'];

/** A statement the proxy recognises by its text: the commit point it belongs to and the engine's name for it. */
export interface KnownStatement {
  point: CommitPoint;
  name: string;
}

/** One direction's fault state, shared by every connection of the proxy. */
export interface Shape {
  /** Partitioned: nothing is forwarded until healed. */
  held: boolean;
  latencyMs: number;
  /** Each chunk's delay is latencyMs plus a uniform draw in [-jitterMs, +jitterMs] (never below 0; order kept). */
  jitterMs: number;
  /** 0: no cap. */
  bytesPerS: number;
}

/** What a reset-after-commit cut: the proof that the server committed and the client never heard. */
export interface CommitCut {
  point: CommitPoint;
  /** The engine's name of the statement that made the transaction belong to the point (ClaimJobs, CompleteJobs...). */
  statement: string;
  /** The CommandComplete tags the server sent and the client never received, last one the commit's (`COMMIT`, `UPDATE 3`). */
  tags: string[];
  /** The statement's parameters as text (a key, a list of job ids). */
  params: (string | null)[];
  /** The first column of each row the server returned (ClaimJobs: the claimed job ids). */
  rowIds: string[];
  bytesDropped: number;
  /** The connection's number on this proxy. */
  connection: number;
}

interface Armed {
  point: CommitPoint;
  resolve: (cut: CommitCut | null) => void;
}

/** Bytes in one direction, delayed, paced or held, in arrival order. */
class Pipe {
  private queue: { bytes: Buffer; at: number }[] = [];
  private lastAt = 0;
  private timer?: ClockTimer;

  constructor(
    private readonly dest: Socket,
    private readonly shape: Shape,
    private readonly clock: Clock,
    private readonly rng: Rng,
    /** Told the size of every chunk that was queued (held, delayed or paced) rather than forwarded at once. */
    private readonly onShaped: (bytes: number) => void,
  ) {}

  push(bytes: Buffer): void {
    const s = this.shape;
    if (!s.held && s.latencyMs === 0 && s.bytesPerS === 0 && this.queue.length === 0) {
      this.dest.write(bytes);
      return;
    }
    const now = this.clock.now();
    const jitter = s.jitterMs ? (this.rng.next() * 2 - 1) * s.jitterMs : 0;
    let at = Math.max(now + Math.max(0, s.latencyMs + jitter), this.lastAt);
    if (s.bytesPerS > 0) at += (bytes.length / s.bytesPerS) * 1000;
    this.lastAt = at;
    this.queue.push({ bytes, at });
    this.onShaped(bytes.length);
    this.pump();
  }

  /** Bytes waiting (held by a partition or not yet due). */
  get queuedBytes(): number {
    let n = 0;
    for (const q of this.queue) n += q.bytes.length;
    return n;
  }

  /** Forwards what is due; sleeps until the next chunk is. A held pipe waits for heal(), which pumps it. */
  pump(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.shape.held || this.dest.destroyed) return;
    const now = this.clock.now();
    while (this.queue.length && this.queue[0].at <= now) this.dest.write(this.queue.shift()!.bytes);
    if (this.queue.length) this.timer = startTimer(this.clock, this.queue[0].at - now, () => this.pump());
  }

  stop(): void {
    this.timer?.cancel();
    this.queue = [];
  }
}

/** One client connection spliced to its upstream connection, with what the proxy learned of its statements. */
class Link {
  readonly toServer: Pipe;
  readonly toClient: Pipe;
  /** Prepared statements of this connection by name: a Bind names one, its text came in its Parse. */
  private readonly statements = new Map<string, string>();
  /** Statements of known points run in the open transaction (cleared when the server says it is idle again). */
  private readonly points = new Map<CommitPoint, { name: string; params: (string | null)[] }>();
  private readonly clientFramer: WireFramer;
  private readonly serverFramer: WireFramer;
  /** The statement whose Bind is on its way: its parameters follow in the Bind. */
  private lastKnown?: KnownStatement;
  /** Server messages held back while deciding whether to cut: a transaction of the armed point is finishing. */
  private held?: { messages: Buffer[]; tags: string[]; rowIds: string[]; failed: boolean };

  constructor(
    readonly id: number,
    readonly client: Socket,
    readonly server: Socket,
    private readonly proxy: LinkProxy,
    shapes: Record<Direction, Shape>,
    clock: Clock,
    rng: Rng,
  ) {
    const shaped = (n: number) => (proxy.stats.shapedBytes += n);
    this.toServer = new Pipe(server, shapes.toServer, clock, rng, shaped);
    this.toClient = new Pipe(client, shapes.toClient, clock, rng, shaped);
    this.serverFramer = new WireFramer('server');
    this.clientFramer = new WireFramer('client', () => this.serverFramer.expectRawByte());
  }

  fromClient(chunk: Buffer): void {
    for (const m of this.clientFramer.feed(chunk)) {
      this.observeClient(m);
      this.toServer.push(m.bytes);
    }
  }

  fromServer(chunk: Buffer): void {
    for (const m of this.serverFramer.feed(chunk)) {
      if (this.destroyed) return;
      this.observeServer(m);
    }
  }

  get destroyed(): boolean {
    return this.client.destroyed || this.server.destroyed;
  }

  reset(): void {
    this.toServer.stop();
    this.toClient.stop();
    // An RST, not a FIN: the client's read fails with ECONNRESET, as when a middlebox or a host drops the connection.
    if (!this.client.destroyed) this.client.resetAndDestroy();
    this.server.destroy();
  }

  private observeClient(m: WireMessage): void {
    let text: string | undefined;
    if (m.type === 'P') {
      const name = cstring(m.body, 0);
      text = cstring(m.body, name.next).value;
      this.statements.set(name.value, text);
      this.lastKnown = this.proxy.classify(text);
      return;
    }
    if (m.type === 'B') {
      const bind = parseBind(m.body);
      if (bind.statement) this.proxy.stats.namedBinds++;
      else this.proxy.stats.unnamedBinds++;
      const known = this.proxy.classify(this.statements.get(bind.statement) ?? '') ?? this.lastKnown;
      if (known) this.points.set(known.point, { name: known.name, params: bind.params });
      if (known) this.proxy.bound(known.point);
      this.lastKnown = undefined;
      return;
    }
    if (m.type === 'Q') {
      const known = this.proxy.classify(cstring(m.body, 0).value);
      if (known) this.points.set(known.point, { name: known.name, params: [] });
      if (known) this.proxy.bound(known.point);
    }
  }

  private observeServer(m: WireMessage): void {
    const armed = this.proxy.armedPoint;
    if (!this.held && armed && this.points.has(armed) && (m.type === 'C' || m.type === 'D' || m.type === 'T' || m.type === 'Z')) {
      this.held = { messages: [], tags: [], rowIds: [], failed: false };
    }
    if (!this.held) {
      this.toClient.push(m.bytes);
      if (m.type === 'Z' && m.body[0] === 0x49 /* I: idle, the transaction is over */) this.points.clear();
      return;
    }
    const h = this.held;
    h.messages.push(m.bytes);
    if (m.type === 'C') h.tags.push(cstring(m.body, 0).value);
    else if (m.type === 'D') {
      const id = firstColumn(m.body);
      if (id !== null) h.rowIds.push(id);
    } else if (m.type === 'E') h.failed = true;
    if (m.type !== 'Z') return;
    this.held = undefined;
    const idle = m.body[0] === 0x49;
    const last = h.tags.at(-1) ?? '';
    // Committed, and it wrote something: a claim that found nothing or a completion its fence refused ('UPDATE 0') proves nothing.
    const committed = idle && !h.failed && last !== '' && last !== 'ROLLBACK' && !/ 0$/.test(last);
    const point = this.proxy.armedPoint;
    const statement = point ? this.points.get(point) : undefined;
    if (committed && point && statement) {
      const bytesDropped = h.messages.reduce((n, b) => n + b.length, 0);
      this.proxy.cut({ point, statement: statement.name, tags: h.tags, params: statement.params, rowIds: h.rowIds, bytesDropped, connection: this.id });
      this.reset();
      return;
    }
    for (const b of h.messages) this.toClient.push(b);
    if (idle) this.points.clear();
  }
}

export interface LinkProxyOptions {
  /** Names the proxy in evidence: `worker-0`, `producer`. */
  name: string;
  upstream: { host: string; port: number };
  clock: Clock;
  rng: Rng;
  /** Which known statement a query text is, if any (commit-points.ts). */
  classify: (text: string) => KnownStatement | undefined;
}

export class LinkProxy {
  readonly name: string;
  readonly shapes: Record<Direction, Shape> = {
    toServer: { held: false, latencyMs: 0, jitterMs: 0, bytesPerS: 0 },
    toClient: { held: false, latencyMs: 0, jitterMs: 0, bytesPerS: 0 },
  };
  private upstream: { host: string; port: number };
  private readonly links = new Set<Link>();
  private server?: Server;
  private nextId = 1;
  private armed?: Armed;
  /** Run, once, as a statement of this point is executed, before its bytes are forwarded (armOnStatement). */
  private onStatement?: { point: CommitPoint; run: () => void };
  /**
   * Connections opened through this proxy, reset by it, and bytes it queued under a fault (held, delayed, paced), since
   * it started; and the statements its clients bound (executed): named (prepared) ones and unnamed ones.
   */
  readonly stats = { connections: 0, resets: 0, shapedBytes: 0, namedBinds: 0, unnamedBinds: 0 };

  constructor(private readonly options: LinkProxyOptions) {
    this.name = options.name;
    this.upstream = options.upstream;
  }

  classify(text: string): KnownStatement | undefined {
    return this.options.classify(text);
  }

  /** Listens on a free loopback port; returns it. */
  listen(): Promise<number> {
    const server = createServer((client) => this.accept(client));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
  }

  get port(): number {
    return (this.server?.address() as { port: number } | null)?.port ?? 0;
  }

  /** `url` with its host and port replaced by this proxy's. */
  urlThrough(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  /** New connections go to `upstream` from now on (a failover); open ones stay where they are until reset. */
  retarget(upstream: { host: string; port: number }): void {
    this.upstream = upstream;
  }

  /** Open client connections. */
  get open(): number {
    return this.links.size;
  }

  /** Bytes queued in each direction over every connection: what a partition holds. */
  queued(): Record<Direction, number> {
    let toServer = 0;
    let toClient = 0;
    for (const l of this.links) {
      toServer += l.toServer.queuedBytes;
      toClient += l.toClient.queuedBytes;
    }
    return { toServer, toClient };
  }

  /** Sets part of a direction's shape and forwards whatever the change made due (a heal releases what was held). */
  setShape(dirs: readonly Direction[], change: Partial<Shape>): void {
    for (const d of dirs) Object.assign(this.shapes[d], change);
    for (const l of this.links) {
      if (dirs.includes('toServer')) l.toServer.pump();
      if (dirs.includes('toClient')) l.toClient.pump();
    }
  }

  /** Destroys every open connection with an RST; returns how many. */
  reset(): number {
    const n = this.links.size;
    for (const l of [...this.links]) l.reset();
    this.stats.resets += n;
    return n;
  }

  /**
   * Arms one cut: the next connection whose transaction ran a statement of
   * `point` and then committed (its ReadyForQuery says idle after a
   * CommandComplete, with no error) is reset before the client receives the
   * answer. Resolves with what was cut, or null when disarmed first.
   */
  armCommitCut(point: CommitPoint): { cut: Promise<CommitCut | null>; disarm: () => void } {
    this.armed?.resolve(null);
    let armed!: Armed;
    const cut = new Promise<CommitCut | null>((resolve) => (armed = { point, resolve }));
    this.armed = armed;
    return {
      cut,
      disarm: () => {
        if (this.armed !== armed) return;
        this.armed = undefined;
        armed.resolve(null);
      },
    };
  }

  /**
   * Runs `run` once, synchronously, when a client next executes a statement of `point` (its Bind, or a simple
   * Query), before the proxy forwards it: a shape `run` sets (a partition) applies to that statement's own bytes.
   * Returns a disarm.
   */
  armOnStatement(point: CommitPoint, run: () => void): () => void {
    const armed = { point, run };
    this.onStatement = armed;
    return () => {
      if (this.onStatement === armed) this.onStatement = undefined;
    };
  }

  /** A link saw a statement of `point` executed, about to be forwarded. */
  bound(point: CommitPoint): void {
    const armed = this.onStatement;
    if (armed?.point !== point) return;
    this.onStatement = undefined;
    armed.run();
  }

  get armedPoint(): CommitPoint | undefined {
    return this.armed?.point;
  }

  /** A link cut its connection for the armed point. */
  cut(c: CommitCut): void {
    const armed = this.armed;
    this.armed = undefined;
    this.stats.resets++;
    armed?.resolve(c);
  }

  /** Stops listening and destroys every connection. Safe to call twice. */
  async close(): Promise<void> {
    this.armed?.resolve(null);
    this.armed = undefined;
    this.onStatement = undefined;
    for (const l of [...this.links]) l.reset();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const upstream = connect(this.upstream.port, this.upstream.host);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const link = new Link(this.nextId++, client, upstream, this, this.shapes, this.options.clock, this.options.rng.fork(`link-${this.nextId}`));
    this.links.add(link);
    this.stats.connections++;
    const end = () => {
      if (!this.links.delete(link)) return;
      link.reset();
    };
    client.on('data', (c: Buffer) => link.fromClient(c));
    upstream.on('data', (c: Buffer) => link.fromServer(c));
    for (const s of [client, upstream]) {
      s.on('error', end);
      s.on('close', end);
    }
  }
}
