// One worker OS process of the bench, compiled: `node dist/bench/worker-child.js <configId> <url>`
// (no loader: every system's child runs the same way; see childCommand in proc.ts).
// Protocol over IPC: sends `ready` once connected, with how it runs (node, execArgv,
// NODE_OPTIONS, its own file: the parent refuses a loader); on `go` starts claiming
// and sends `started`; reports its handled count every `reportEveryMs` (in `go`); on `stop`
// stops the worker and sends `stopped` with the due-to-start latencies (the warm-up's apart) and each one's due instant.
import { systemClock } from '../engine/clock.ts';
import { dueToStartMs, type ChildMessage } from './proc.ts';
import { configById, FAMILIES } from './systems/configs.ts';
import type { BenchJob, WorkerHandle } from './systems/types.ts';

const send = (m: ChildMessage) => process.send?.(m);

async function main(): Promise<void> {
  const [configId, url] = process.argv.slice(2);
  if (!configId || !url) throw new Error(`usage: worker-child.ts <configId> <url>; got "${configId ?? ''}"`);
  const config = configById(configId);
  let n = 0;
  const latencies: number[] = [];
  const warmupLatencies: number[] = [];
  const dueAt: number[] = [];
  const onJob = (job: BenchJob) => {
    n++;
    if (typeof job?.t !== 'number' || job.t <= 0) return;
    if (job.warmup) {
      warmupLatencies.push(dueToStartMs(job));
    } else {
      latencies.push(dueToStartMs(job));
      dueAt.push(job.t);
    }
  };
  const handle: WorkerHandle = await FAMILIES[config.family].worker(url, config.settings, onJob);
  const reporter = new AbortController();
  const report = async (reportEveryMs: number) => {
    // Every `reportEveryMs`, only when it changed: the parent ends a drain on these, so a coarse report would inflate short drains.
    let last = -1;
    while (!reporter.signal.aborted) {
      if (n !== last) send({ type: 'count', n });
      last = n;
      await systemClock.sleep(reportEveryMs, reporter.signal).catch(() => {});
    }
  };
  process.on('message', async (m: { type: string; reportEveryMs?: number }) => {
    try {
      if (m.type === 'go') {
        await handle.start();
        send({ type: 'started' });
        void report(m.reportEveryMs ?? 10);
      } else if (m.type === 'stop') {
        reporter.abort();
        await handle.stop();
        // Exit once the message is out: some libraries leave timers behind after stop().
        process.send!({ type: 'stopped', n, latenciesMs: latencies, warmupLatenciesMs: warmupLatencies, dueAtMs: dueAt } satisfies ChildMessage, () => process.exit(0));
      }
    } catch (err) {
      send({ type: 'error', error: (err as Error).stack ?? String(err) });
    }
  });
  // The parent gone (killed, or its run stopped by a signal) means nobody will send `stop`: a child left running
  // would go on retrying against a server that no longer exists.
  process.on('disconnect', () => process.exit(1));
  send({ type: 'ready', runtime: { node: process.version, execArgv: process.execArgv, nodeOptions: process.env.NODE_OPTIONS ?? '', script: import.meta.url } });
}

main().catch((err) => {
  send({ type: 'error', error: (err as Error).stack ?? String(err) });
  process.exitCode = 1;
  process.disconnect?.();
});
