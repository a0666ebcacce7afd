import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Clock } from '../../engine/clock.ts';
import type { Logger } from '../../engine/log.ts';
import { freePort, REAPER } from '../postgres/embedded.ts';

/** What a machine without Prometheus is told: the invariants that need one say this, and are inconclusive. */
export const PROMETHEUS_INSTALL = 'apt-get install prometheus (Debian/Ubuntu: brings prometheus and promtool), or set STAMPEDE_PROMETHEUS=/path/to/prometheus';

/** The `prometheus` binary: STAMPEDE_PROMETHEUS, else the first on PATH; null when there is none. */
export function findPrometheus(env: NodeJS.ProcessEnv = process.env): string | null {
  const given = env.STAMPEDE_PROMETHEUS;
  if (given) {
    if (!executable(given)) throw new Error(`STAMPEDE_PROMETHEUS: ${given} is not an executable file; expected the path of a prometheus binary`);
    return given;
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, 'prometheus'))) return join(dir, 'prometheus');
  }
  return null;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** One scrape target: a `host:port` and the labels its series get (which process it is). */
export interface ScrapeTarget {
  address: string;
  labels: Record<string, string>;
}

export interface PrometheusOptions {
  binary: string;
  /** The alert rules to load, as text (already scaled: harness/prometheus/rules.ts). */
  rulesText: string;
  scrapeIntervalMs: number;
  evalIntervalMs: number;
  clock: Clock;
  log: Logger;
}

/** A sample of a range vector: epoch seconds and the value as Prometheus writes it (a string). */
export type ApiSample = [number, string];
export interface ApiSeries {
  metric: Record<string, string>;
  values?: ApiSample[];
  value?: ApiSample;
}

/**
 * A real Prometheus for one scenario run: on 127.0.0.1 at a free port, with
 * its config, the rules and its TSDB in a temp dir that stop() removes. Its
 * targets are a file_sd file the runner rewrites as worker processes come and
 * go (Prometheus watches it). A detached reaper (harness/postgres/reaper.mjs,
 * the embedded Postgres's) stops the process and removes the dir if the runner
 * dies without stopping it (Ctrl-C twice, SIGKILL).
 */
export class PrometheusServer {
  private proc?: ChildProcess;
  private reaper?: ChildProcess;
  private rootDir = '';
  private port = 0;
  private stderrTail = '';

  constructor(private readonly options: PrometheusOptions) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts it scraping `targets` from the first moment (a change of targets takes Prometheus up to 5 s to pick up). */
  async start(targets: readonly ScrapeTarget[]): Promise<void> {
    const o = this.options;
    this.rootDir = mkdtempSync(join(tmpdir(), 'stampede-prom-'));
    const pidFile = join(this.rootDir, 'prometheus.pid');
    // Before the server, so there is no moment in which our death would orphan it.
    this.reaper = spawn(process.execPath, [REAPER, String(process.pid), this.rootDir, pidFile, 'SIGTERM'], { detached: true, stdio: 'ignore' });
    this.reaper.unref();
    writeFileSync(join(this.rootDir, 'rules.yml'), o.rulesText);
    this.setTargets(targets);
    this.writeConfig(false);
    this.port = await freePort();
    const proc = spawn(
      o.binary,
      [
        `--config.file=${join(this.rootDir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(this.rootDir, 'data')}`,
        `--web.listen-address=127.0.0.1:${this.port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
    );
    this.proc = proc;
    proc.stderr!.on('data', (c) => (this.stderrTail = (this.stderrTail + c).slice(-4_000)));
    writeFileSync(pidFile, `${proc.pid}\n`);
    const exited = new Promise<never>((_, reject) =>
      proc.once('exit', (code, signal) => reject(new Error(`prometheus exited (${code ?? signal}) while starting:\n${this.stderrTail}`))),
    );
    exited.catch(() => {});
    await Promise.race([this.waitReady(30_000), exited]);
    o.log.info('Prometheus started', { url: this.url, dir: this.rootDir });
  }

  /** The config, with or without the rules: they are loaded once every target has been scraped (loadRules). */
  private writeConfig(withRules: boolean): void {
    const o = this.options;
    const ms = (n: number) => `${Math.max(1, Math.round(n))}ms`;
    writeFileSync(
      join(this.rootDir, 'prometheus.yml'),
      JSON.stringify({
        global: { scrape_interval: ms(o.scrapeIntervalMs), scrape_timeout: ms(o.scrapeIntervalMs), evaluation_interval: ms(o.evalIntervalMs) },
        rule_files: withRules ? [join(this.rootDir, 'rules.yml')] : [],
        scrape_configs: [{ job_name: 'stampede', file_sd_configs: [{ files: [join(this.rootDir, 'targets.json')], refresh_interval: '1s' }] }],
      }),
    );
  }

  /**
   * Loads the rules (a config reload, SIGHUP) and waits until Prometheus lists
   * them. Prometheus hands new targets to its scrapers at most every 5 s, so
   * rules loaded at start would evaluate seconds of no data at all, which the
   * staleness rule rightly pages on; loaded after the first scrapes, they see
   * what a Prometheus running all along would.
   */
  async loadRules(): Promise<void> {
    this.writeConfig(true);
    this.proc?.kill('SIGHUP');
    const until = this.options.clock.now() + 15_000;
    while ((await this.api<{ groups: unknown[] }>('/api/v1/rules')).groups.length === 0) {
      if (this.options.clock.now() > until) throw new Error(`prometheus did not load the rules within 15 s:\n${this.stderrTail}`);
      await this.options.clock.sleep(100);
    }
  }

  private async waitReady(timeoutMs: number): Promise<void> {
    const until = this.options.clock.now() + timeoutMs;
    while (this.options.clock.now() < until) {
      const ok = await fetch(`${this.url}/-/ready`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.ok, () => false);
      if (ok) return;
      await this.options.clock.sleep(100);
    }
    throw new Error(`prometheus was not ready within ${timeoutMs} ms:\n${this.stderrTail}`);
  }

  /** Replaces the scrape targets; Prometheus picks the file up by itself. Written whole, then renamed, so it never reads half a file. */
  setTargets(targets: readonly ScrapeTarget[]): void {
    const file = join(this.rootDir, 'targets.json');
    writeFileSync(`${file}.tmp`, JSON.stringify(targets.map((t) => ({ targets: [t.address], labels: t.labels }))));
    renameSync(`${file}.tmp`, file);
  }

  /** GET an API path; the `data` of a success, or an error naming the query and what Prometheus said. */
  async api<T>(path: string, params: Record<string, string> = {}): Promise<T> {
    const res = await fetch(`${this.url}${path}?${new URLSearchParams(params)}`, { signal: AbortSignal.timeout(30_000) });
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new PrometheusQueryError(params.query ?? path, body.error ?? `HTTP ${res.status}`);
    return body.data;
  }

  /** An instant query at `timeS` (epoch seconds): its vector or matrix. */
  async query(query: string, timeS: number): Promise<ApiSeries[]> {
    return (await this.api<{ result: ApiSeries[] }>('/api/v1/query', { query, time: String(timeS) })).result;
  }

  async queryRange(query: string, startS: number, endS: number, stepS: number): Promise<ApiSeries[]> {
    const params = { query, start: String(startS), end: String(endS), step: String(stepS) };
    return (await this.api<{ result: ApiSeries[] }>('/api/v1/query_range', params)).result;
  }

  /** Stops the server and removes its dir. Calling it twice is harmless. */
  async stop(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill('SIGTERM');
      const killed = await Promise.race([exited.then(() => true), this.options.clock.sleep(10_000).then(() => false)]);
      if (!killed) {
        proc.kill('SIGKILL');
        await exited;
      }
    }
    this.reaper?.kill('SIGTERM');
    this.reaper = undefined;
    if (this.rootDir) rmSync(this.rootDir, { recursive: true, force: true });
  }
}

/** Prometheus refused a query (a parse error, an unknown function): names the query. */
export class PrometheusQueryError extends Error {
  constructor(
    readonly query: string,
    readonly reason: string,
  ) {
    super(`prometheus refused ${query}: ${reason}`);
  }
}
