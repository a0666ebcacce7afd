import type { Clock } from '../../engine/clock.ts';
import { Db } from '../../engine/db.ts';
import type { Rng } from '../../engine/rng.ts';
import { classifyStatement } from '../faults/commit-points.ts';
import { LinkProxy } from '../faults/proxy.ts';

/**
 * The links of a run whose scenario has link faults: one proxy per worker
 * slot (a restarted worker reconnects through the same one), and one for the
 * nemesis's own producer (the `enqueue` commit cut). Each worker's
 * DATABASE_URL names its proxy, so a fault can cut one worker or all. Every
 * proxy points at the run's server; a failover would `retarget` them.
 */
export class LinkNet {
  private readonly proxies = new Map<string, LinkProxy>();
  private producerDb?: Db;

  constructor(
    private readonly url: string,
    private readonly clock: Clock,
    private readonly rng: Rng,
  ) {}

  /** Opens `worker-0` … `worker-<n-1>` and `producer`. */
  async start(workers: number): Promise<void> {
    const u = new URL(this.url);
    const upstream = { host: u.hostname, port: Number(u.port || 5432) };
    for (const name of [...Array.from({ length: workers }, (_, i) => `worker-${i}`), 'producer']) {
      const proxy = new LinkProxy({ name, upstream, clock: this.clock, rng: this.rng.fork(name), classify: classifyStatement });
      await proxy.listen();
      this.proxies.set(name, proxy);
    }
  }

  /** The proxy of a worker slot (`worker-<i>`) or of the producer. */
  proxy(name: string): LinkProxy {
    const p = this.proxies.get(name);
    if (!p) throw new Error(`no link proxy named ${name}`);
    return p;
  }

  /** The run's URL through a worker slot's proxy. */
  workerUrl(slot: number): string {
    return this.proxy(`worker-${slot}`).urlThrough(this.url);
  }

  /** A pool of one connection through the producer's proxy, opened on first use. */
  producer(): Db {
    if (!this.producerDb) {
      this.producerDb = new Db({ connectionString: this.proxy('producer').urlThrough(this.url), maxConnections: 1, applicationName: 'stampede:nemesis:producer' });
      this.producerDb.pool.on('connect', (c) => c.on('error', () => {}));
    }
    return this.producerDb;
  }

  /** What each worker slot's connections bound through its proxy over the run, named and unnamed (prepared-statements-honoured). */
  workerBinds(): { node: string; namedBinds: number; unnamedBinds: number }[] {
    return [...this.proxies.values()].filter((p) => p.name.startsWith('worker-')).map((p) => ({ node: p.name, namedBinds: p.stats.namedBinds, unnamedBinds: p.stats.unnamedBinds }));
  }

  /** Closes the producer's pool and every proxy (their connections reset). Safe to call twice. */
  async close(): Promise<void> {
    await this.producerDb?.close().catch(() => {});
    this.producerDb = undefined;
    await Promise.all([...this.proxies.values()].map((p) => p.close()));
    this.proxies.clear();
  }
}
