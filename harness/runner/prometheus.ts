import type { Clock } from '../../engine/clock.ts';
import type { Logger } from '../../engine/log.ts';
import { createMetrics, type StampedeMetrics } from '../../engine/metrics/registry.ts';
import { MetricsServer } from '../../engine/metrics/server.ts';
import { PeriodicLoop } from '../../engine/periodic.ts';
import { loadOpsFile } from '../prometheus/ops-files.ts';
import { READ_BACK, readAlerts, readDashboard, readSeries, type ReadWindow } from '../prometheus/readings.ts';
import { scaleRuleWindows } from '../prometheus/rules.ts';
import { findPrometheus, PROMETHEUS_INSTALL, PrometheusServer, type ScrapeTarget } from '../prometheus/server.ts';
import type { Scenario } from '../scenario.ts';
import type { Fleet } from './fleet.ts';
import type { HistoryRecorder } from './recorder.ts';

/** Where the run's Prometheus takes its rules and dashboard from: the shipped ops/ files unless a team points at its own. */
export interface OpsOverrides {
  /** `--alert-rules PATH`: a rules file to load instead of ops/prometheus/alerts.yml. */
  alertRules?: string;
  /** `--grafana-dashboard PATH`: a dashboard to query instead of ops/grafana/stampede.json. */
  grafanaDashboard?: string;
}

/** Scrape and rule evaluation every second: a scenario lasts tens of seconds, and its alerts' for: are scaled to seconds. */
const SCRAPE_INTERVAL_MS = 1_000;
const EVAL_INTERVAL_MS = 1_000;

/**
 * The scenario runner's Prometheus: it loads the alert rules operators deploy
 * (for: scaled by the scenario's alertForScale, nothing else changed), scrapes
 * every worker process and the runner's queue-state sampler, and at the end of
 * the run its answers (ALERTS, the scraped series, the dashboard's queries)
 * go into the history, where prometheus-alerts, exported-metrics-agree and
 * dashboard-queries-live judge them. Without a prometheus binary it records
 * that, and those invariants are inconclusive.
 */
export class RunPrometheus {
  /** The sampler's metrics, served on their own /metrics for Prometheus to scrape. */
  readonly samplerMetrics: StampedeMetrics = createMetrics();
  private readonly samplerServer = new MetricsServer(this.samplerMetrics.registry, { port: 0 });
  private server?: PrometheusServer;
  private targets?: PeriodicLoop<void>;
  private lastTargets = '';
  private startedAtMs = 0;

  private constructor(
    private readonly scenario: Scenario,
    private readonly binary: string,
    private readonly dashboard: { text: string; source: string },
    private readonly rules: ReturnType<typeof scaleRuleWindows> & { source: string },
    private readonly recorder: HistoryRecorder,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /**
   * Loads the rules and dashboard (a wrong file is a setup error, exit 2) and
   * finds the binary; null, recorded as `prometheus:absent`, when there is none.
   */
  static prepare(s: Scenario, ops: OpsOverrides, recorder: HistoryRecorder, clock: Clock, log: Logger): RunPrometheus | null {
    const rulesFile = loadOpsFile('ops/prometheus/alerts.yml', ops.alertRules);
    const rules = { ...scaleRuleWindows(rulesFile.text, s.alertForScale, rulesFile.source), source: rulesFile.source };
    const dashboard = loadOpsFile('ops/grafana/stampede.json', ops.grafanaDashboard);
    try {
      JSON.parse(dashboard.text);
    } catch (err) {
      throw new Error(`${dashboard.source}: not JSON (${(err as Error).message}); expected a Grafana dashboard`);
    }
    const binary = findPrometheus();
    if (binary === null) {
      recorder.record({ type: 'prometheus:absent', node: 'harness', install: PROMETHEUS_INSTALL });
      log.warn(`no prometheus binary: prometheus-alerts, exported-metrics-agree and dashboard-queries-live will be inconclusive; install it: ${PROMETHEUS_INSTALL}`);
      return null;
    }
    return new RunPrometheus(s, binary, dashboard, rules, recorder, clock, log);
  }

  /**
   * Starts the sampler's /metrics, then Prometheus scraping it and the fleet's
   * workers (kept current as workers restart). Call once the sampler has
   * sampled: before that its figures are zeros, which the staleness rule would
   * rightly page on. A Prometheus that fails to start is recorded, and the
   * run goes on without it.
   */
  async start(fleet: Fleet): Promise<void> {
    await this.samplerServer.start();
    const server = new PrometheusServer({
      binary: this.binary,
      rulesText: this.rules.text,
      scrapeIntervalMs: SCRAPE_INTERVAL_MS,
      evalIntervalMs: EVAL_INTERVAL_MS,
      clock: this.clock,
      log: this.log,
    });
    this.server = server;
    try {
      await server.start(this.targetsOf(fleet));
      await this.firstScrape(server);
      await server.loadRules();
    } catch (err) {
      this.fail(err);
      return;
    }
    this.startedAtMs = this.clock.now();
    this.recorder.record({
      type: 'prometheus:started',
      node: 'harness',
      rulesSource: this.rules.source,
      dashboardSource: this.dashboard.source,
      rules: this.rules.rules,
      scrapeIntervalMs: SCRAPE_INTERVAL_MS,
      evalIntervalMs: EVAL_INTERVAL_MS,
      alertForScale: this.scenario.alertForScale,
    });
    this.lastTargets = JSON.stringify(this.targetsOf(fleet));
    const sync = async () => this.syncTargets(fleet);
    this.targets = new PeriodicLoop({ clock: this.clock, log: this.log, what: 'prometheus targets', intervalMs: 250, runOnce: sync });
    this.targets.start();
  }

  private targetsOf(fleet: Fleet): ScrapeTarget[] {
    return [
      { address: `127.0.0.1:${this.samplerServer.port}`, labels: { role: 'sampler' } },
      ...fleet.metricsEndpoints().map((w) => ({ address: `127.0.0.1:${w.port}`, labels: { role: 'worker', worker: w.workerId } })),
    ];
  }

  /** Waits until Prometheus has scraped the sampler once (it takes up to 5 s to hand a scraper its targets). */
  private async firstScrape(server: PrometheusServer): Promise<void> {
    const until = this.clock.now() + 15_000;
    while ((await server.query('up{role="sampler"} == 1', this.clock.now() / 1000)).length === 0) {
      if (this.clock.now() > until) throw new Error('prometheus did not scrape the sampler within 15 s');
      await this.clock.sleep(100);
    }
  }

  private syncTargets(fleet: Fleet): void {
    const targets = this.targetsOf(fleet);
    const text = JSON.stringify(targets);
    if (text === this.lastTargets) return;
    this.lastTargets = text;
    this.server?.setTargets(targets);
  }

  /** Prometheus's answers over the run, into the history. Reads nothing if it never started; a failed read is recorded. */
  async read(): Promise<void> {
    if (!this.server || !this.startedAtMs) return;
    const startedAt = this.clock.now() - this.recorder.now();
    const w: ReadWindow = { fromMs: this.startedAtMs, toMs: this.clock.now(), toT: (ms) => ms - startedAt };
    try {
      const events = [await readAlerts(this.server, w)];
      for (const r of READ_BACK) events.push(await readSeries(this.server, w, r.metric, r.role, r.last));
      const queues = this.scenario.lanes.map((l) => l.queue);
      events.push(await readDashboard(this.server, w, this.dashboard.text, this.dashboard.source, SCRAPE_INTERVAL_MS, queues));
      for (const e of events) this.recorder.record(e);
    } catch (err) {
      this.fail(err);
    }
  }

  private fail(err: unknown): void {
    const error = err instanceof Error ? err.message : String(err);
    this.log.warn('prometheus failed; the invariants that read it will be inconclusive', { error });
    this.recorder.record({ type: 'prometheus:failed', node: 'harness', error });
  }

  /** Stops Prometheus (its dir removed) and the sampler's /metrics. Calling it twice is harmless. */
  async stop(): Promise<void> {
    await this.targets?.stop();
    await this.server?.stop();
    this.server = undefined;
    await this.samplerServer.stop();
  }
}
