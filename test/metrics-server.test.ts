import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock.ts';
import { enqueue } from '../engine/enqueue.ts';
import { createLogger } from '../engine/log.ts';
import { QueueStateSampler } from '../engine/metrics/queue-state-sampler.ts';
import { createMetrics } from '../engine/metrics/registry.ts';
import { MetricsServer } from '../engine/metrics/server.ts';
import { freshDatabase } from './support/db.ts';

const { db } = await freshDatabase();
const quiet = createLogger('test', 'silent');
const servers: MetricsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

function server(...args: ConstructorParameters<typeof MetricsServer>): MetricsServer {
  const s = new MetricsServer(args[0], args[1], args[2] ?? quiet);
  servers.push(s);
  return s;
}

describe('/metrics over HTTP', () => {
  it('serves the registry over loopback, with sampled queue state from the database', async () => {
    const metrics = createMetrics();
    metrics.claims.inc({ queue: 'mail' }, 4);
    await enqueue(db, 'mail', {}, { runAt: new Date(0) });
    await new QueueStateSampler(db, systemClock, metrics, {}, quiet).runOnce();
    const s = server(metrics.registry, { port: 0 });
    await s.start();
    expect(s.host).toBe('127.0.0.1');
    const res = await fetch(`http://127.0.0.1:${s.port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('stampede_jobs_claimed_total{queue="mail"} 4');
    expect(text).toContain('stampede_queue_depth{queue="mail",state="pending"} 1');
    expect(text).toMatch(/^stampede_queue_oldest_unclaimed_age_seconds\{queue="mail"\} \d{7,}/m); // due since 1970
  });

  it('answers 404 off /metrics and 405 for other methods', async () => {
    const s = server(createMetrics().registry, { port: 0 });
    await s.start();
    expect((await fetch(`http://127.0.0.1:${s.port}/`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${s.port}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it('binds only to the loopback interface unless a host is configured', async () => {
    const s = server(createMetrics().registry, { port: 0 });
    await s.start();
    expect(s.boundAddress).toBe('127.0.0.1');
    const all = server(createMetrics().registry, { port: 0, host: '0.0.0.0' });
    await all.start();
    expect(all.boundAddress).toBe('0.0.0.0');
  });

  it('is off unless a port is given: start() listens on nothing', async () => {
    const s = server(createMetrics().registry);
    await s.start();
    expect(s.enabled).toBe(false);
    expect(s.port).toBeNull();
  });

  it('start and stop are idempotent; after stop the port refuses connections', async () => {
    const s = server(createMetrics().registry, { port: 0 });
    await Promise.all([s.start(), s.start()]);
    const port = s.port!;
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    await s.stop();
    await s.stop();
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });

  it('a port already taken is a clear error naming it', async () => {
    const first = server(createMetrics().registry, { port: 0 });
    await first.start();
    const second = server(createMetrics().registry, { port: first.port! });
    await expect(second.start()).rejects.toThrow(`127.0.0.1:${first.port}`);
  });

  it('refuses a bad port naming the field', () => {
    expect(() => new MetricsServer(createMetrics().registry, { port: 70_000 })).toThrow('port');
    expect(() => new MetricsServer(createMetrics().registry, { port: -1 })).toThrow('port');
  });
});
