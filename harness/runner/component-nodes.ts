import type { Clock } from '../../engine/clock.ts';
import type { Logger } from '../../engine/log.ts';
import { compiledEntry } from '../../engine/supervisor/compiled-entry.ts';
import { NodeProcess } from '../../engine/supervisor/node-process.ts';
import { MUTANT_ARCHIVER_SCRIPT, MUTANT_RELAY_SCRIPT, mutantRunsIn } from '../mutants/index.ts';
import type { Scenario } from '../scenario.ts';
import { fromReport } from '../history.ts';
import type { HistoryRecorder, Recordable } from './recorder.ts';

/** A killed relay or archiver comes back after this, as a service manager restarts it. */
const RESTART_AFTER_MS = 500;

/**
 * The engine's background components as the CLI runs them, each in its own
 * OS process: `stampede relay` (with its pruner when the scenario sets a
 * retention) delivering to the harness's outbox sink, and `stampede
 * archiver`. A process that dies (a relay-kill fault) is started again, under
 * the same node name. What the relays report (outbox:delivered) goes into
 * the history.
 */
export class ComponentNodes {
  private readonly relays = new Map<number, NodeProcess>();
  private archiver?: NodeProcess;
  private running = false;
  private readonly loops: Promise<void>[] = [];
  private readonly stopped = new AbortController();
  private readonly generation = new Map<string, number>();

  constructor(
    private readonly scenario: Scenario,
    private readonly url: string,
    private readonly recorder: HistoryRecorder,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly relayLog: (line: string) => void,
    /** The outbox sink's base URL, for the relays' deliver module. */
    private readonly sinkUrl: string | undefined,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    const relays = this.scenario.relays;
    if (relays) for (let i = 0; i < relays.processes; i++) this.loops.push(this.keep(`relay-${i}`, () => this.spawnRelay(i), (p) => this.relays.set(i, p)));
    if (this.scenario.archiver) this.loops.push(this.keep('archiver-0', () => this.spawnArchiver(), (p) => (this.archiver = p)));
  }

  /** The live relay process with this index, if any. */
  relay(index: number): NodeProcess | undefined {
    const p = this.relays.get(index);
    return p?.alive ? p : undefined;
  }

  get relayCount(): number {
    return this.scenario.relays?.processes ?? 0;
  }

  /** SIGTERM to every process (they finish what is in flight), no more restarts. Safe to call twice. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopped.abort();
    await Promise.all([...this.relays.values(), ...(this.archiver ? [this.archiver] : [])].map((p) => p.stop(5_000)));
    await Promise.all(this.loops);
  }

  private async keep(node: string, spawn: () => NodeProcess, current: (p: NodeProcess) => void): Promise<void> {
    const role = node.startsWith('relay') ? 'relay' : 'archiver';
    while (this.running) {
      const proc = spawn();
      current(proc);
      this.recorder.record({ type: 'process:started', node, pid: proc.pid, role });
      const exit = await proc.exited;
      this.recorder.record({ type: 'process:exited', node, pid: proc.pid, role, code: exit.code, signal: exit.signal, expected: !this.running });
      if (this.running) this.log.warn(`${node} exited; restarting`, { code: exit.code, signal: exit.signal });
      await this.clock.sleep(RESTART_AFTER_MS, this.stopped.signal).catch(() => {});
    }
  }

  private mutantArgs(role: 'relay' | 'archiver'): { script?: string; args: string[] } {
    const mutant = this.scenario.engine.mutant;
    if (mutantRunsIn(mutant) !== role) return { args: [] };
    return { script: role === 'relay' ? MUTANT_RELAY_SCRIPT : MUTANT_ARCHIVER_SCRIPT, args: ['--mutant', mutant!] };
  }

  private spawnRelay(index: number): NodeProcess {
    const r = this.scenario.relays!;
    const node = `relay-${index}`;
    const gen = (this.generation.get(node) ?? 0) + 1;
    this.generation.set(node, gen);
    const broken = this.mutantArgs('relay');
    const proc = new NodeProcess({
      script: broken.script ?? 'bin/relay.ts',
      args: [
        ...broken.args,
        '--deliver', compiledEntry('harness/outbox-deliver.ts'),
        '--lease-ms', String(r.leaseMs),
        '--poll-ms', String(r.pollMs),
        '--delivery-timeout-ms', String(r.deliveryTimeoutMs),
        '--backoff-base-ms', String(r.backoffBaseMs),
        '--backoff-cap-ms', String(r.backoffCapMs),
        '--relay-id', `${node}.${gen}`,
        '--seed', `${this.scenario.seed}/${node}.${gen}`,
        ...(r.retentionMs === null ? [] : ['--retention-ms', String(r.retentionMs), '--prune-interval-ms', String(r.pruneIntervalMs)]),
      ],
      env: { DATABASE_URL: this.url, STAMPEDE_HARNESS_SINK_URL: this.sinkUrl ?? '', STAMPEDE_LOG: process.env.STAMPEDE_LOG ?? 'warn' },
      stderr: 'lines',
      onStderrLine: this.relayLog,
    });
    proc.onEvent = (m) => {
      if (m.name === 'outbox:delivered') this.recorder.recordReported({ node, nodeTime: m.nodeTime, ...fromReport(m.name, m.payload) } as Recordable, m.hostTime);
    };
    return proc;
  }

  private spawnArchiver(): NodeProcess {
    const a = this.scenario.archiver!;
    const broken = this.mutantArgs('archiver');
    return new NodeProcess({
      script: broken.script ?? 'bin/archiver.ts',
      args: [...broken.args, '--archive-after-ms', String(a.archiveAfterMs), '--interval-ms', String(a.intervalMs)],
      env: { DATABASE_URL: this.url, STAMPEDE_LOG: process.env.STAMPEDE_LOG ?? 'warn' },
      stderr: 'lines',
      onStderrLine: this.relayLog,
    });
  }
}
