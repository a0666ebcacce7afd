import { afterEach, describe, expect, it } from 'vitest';
import { NodeProcess } from '../engine/supervisor/node-process.ts';
import { freePort } from '../harness/postgres/embedded.ts';
import { freshDatabase } from './support/db.ts';
import { until } from './support/wait.ts';

const { url } = await freshDatabase();
const started: NodeProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.stop(2000)));
});

describe('scheduler node metrics', () => {
  it('exports its clock skew against the database on /metrics', async () => {
    const port = await freePort();
    const node = new NodeProcess({
      script: 'bin/scheduler.ts',
      args: ['--node-id', 'sched-skewed', '--tick-ms', '200', '--metrics-port', String(port)],
      env: { DATABASE_URL: url, STAMPEDE_CLOCK_SKEW_MS: '7000', STAMPEDE_LOG: 'warn' },
    });
    started.push(node);
    const skew = await until('skew gauge', async () => {
      const body = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
      const m = /stampede_clock_skew_seconds\{node="sched-skewed"\} ([\d.]+)/.exec(body);
      return m && Number(m[1]);
    });
    expect(skew).toBeGreaterThan(6);
    expect(skew).toBeLessThan(8);
  });
});
