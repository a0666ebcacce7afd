// A supervised fleet: `stampede workers --processes N -- <stampede worker flags>`.
// Keeps N worker processes alive; one that dies (a crash, an OOM kill, a
// poison job's SIGKILL) is restarted after a backoff that doubles with each
// consecutive crash of its slot (500 ms up to 30 s), so a crash loop slows
// down instead of becoming a fork bomb. SIGTERM/SIGINT stop every worker
// gracefully and exit 0.
import { systemClock } from '../engine/clock.ts';
import { createLogger } from '../engine/log.ts';
import { NodeProcess } from '../engine/supervisor/node-process.ts';
import { ProcessSupervisor } from '../engine/supervisor/supervisor.ts';
import { exitOnHelp, intFlag, parseFlags, shutdownWhenOrphaned, UsageError } from './cli-args.ts';
import { HELP } from './help.ts';
import { parserOptions, usageText } from './usage.ts';

const USAGE = usageText('workers', HELP.workers);

function main(): void {
  const argv = process.argv.slice(2);
  exitOnHelp(argv, USAGE);
  const split = argv.indexOf('--');
  const { values } = parseFlags(split === -1 ? argv : argv.slice(0, split), parserOptions(HELP.workers.flags));
  const processes = intFlag(values, 'processes', 1);
  if (processes === undefined) throw new UsageError('--processes is required');
  const workerArgs = split === -1 ? [] : argv.slice(split + 1);
  if (!workerArgs.includes('--handlers')) throw new UsageError('after --, give the worker flags, at least --handlers <module>');
  const log = createLogger('workers');
  const supervisor = new ProcessSupervisor({
    processes,
    restart: { baseMs: intFlag(values, 'restart-base-ms', 1), capMs: intFlag(values, 'restart-cap-ms', 1) },
    log,
    // 2: the worker refused its flags or the database (a usage error); a restart cannot mend that.
    fatalExitCodes: [2],
    spawn: (slot) => new NodeProcess({ script: 'bin/worker.ts', args: [...workerArgs, '--worker-id', `${process.pid}-slot${slot}-${systemClock.now().toString(36)}`], env: {} }),
  });
  supervisor.events.on('process:started', (e) => log.info('worker started', e));
  // Once: a second signal (Ctrl-C under npm run arrives twice) must not exit before the drain ends.
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await supervisor.stop();
      process.exit(0);
    })());
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  shutdownWhenOrphaned(stop);
  void supervisor.gaveUp.then(() => {
    process.stderr.write('stampede workers: a worker refused its flags or its database (exit 2; its message is above); stopped every worker\n');
    process.exit(2);
  });
  supervisor.start();
}

try {
  main();
} catch (err) {
  const usage = err instanceof UsageError;
  process.stderr.write(`stampede workers: ${(err as Error).message}\n${usage ? USAGE + '\n' : ''}`);
  process.exit(usage ? 2 : 1);
}
