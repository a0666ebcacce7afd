// Started detached by the embedded Postgres provisioner (and by the scenario
// runner's Prometheus, harness/prometheus/server.ts). It outlives its parent on
// purpose: when the parent dies by any means (exit, Ctrl-C, SIGKILL), it stops
// the server whose pid is the first line of the pid file (Postgres's
// postmaster.pid) and removes the temp dir, so no server process or data dir
// of ours is left. Plain JavaScript so it starts in milliseconds without a
// TypeScript loader.
//
// usage: reaper.mjs <parent pid> <root dir> <pid file> [<first signal>, default SIGQUIT]
import { readFileSync, readdirSync, rmSync, existsSync } from 'node:fs';

const [parentPid, rootDir, pidFile] = [Number(process.argv[2]), process.argv[3], process.argv[4]];
// SIGQUIT: Postgres's immediate shutdown, nothing here is worth keeping; Prometheus takes SIGTERM.
const firstSignal = process.argv[5] ?? 'SIGQUIT';

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
};

const postmasterPid = () => {
  try {
    return Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  } catch {
    return 0;
  }
};

/** Processes whose parent is `pid`, from /proc (none elsewhere). */
const childrenOf = (pid) => {
  let names = [];
  try {
    names = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  return names.map(Number).filter((n) => {
    try {
      const stat = readFileSync(`/proc/${n}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
    } catch {
      return false;
    }
  });
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function cleanUp() {
  const pid = postmasterPid();
  if (pid && alive(pid)) {
    // A db-pause fault may have left the server's processes stopped: a stopped process acts on no signal but KILL.
    for (const child of [pid, ...childrenOf(pid)]) {
      try {
        process.kill(child, 'SIGCONT');
      } catch {
        // gone
      }
    }
    process.kill(pid, firstSignal);
    for (let i = 0; i < 50 && alive(pid); i++) await sleep(100);
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
  rmSync(rootDir, { recursive: true, force: true });
}

for (;;) {
  if (!alive(parentPid) || !existsSync(rootDir)) break;
  await sleep(250);
}
if (existsSync(rootDir)) await cleanUp();
process.exit(0);
