import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { WORKER_SHUTDOWN_GRACE_MS } from '../runner/fleet.ts';
import type { Scenario } from '../scenario.ts';
import type { WorkerProcessSpec } from './types.ts';

/**
 * The faults a peer run can inject: they act on processes, the server and the link (the harness's proxy), or
 * enqueue jobs through the peer's own API (poison pills, a herd), not through stampede's tables or API.
 */
export const PEER_FAULTS = new Set([
  'worker-kill',
  'worker-stop',
  'worker-restart',
  'db-restart',
  'db-terminate-backends',
  'partition',
  'latency',
  'bandwidth',
  'reset',
  'poison-pill',
  'thundering-herd',
]);

/**
 * Why a scenario cannot run against a peer, or null: a fault or a feature that
 * is stampede's own (its scheduler nodes, queue limits, relays, operator verbs,
 * mutants) has no counterpart the harness can drive in the peer.
 */
export function peerInapplicable(engine: string, s: Scenario): string | null {
  const faults = [...new Set(s.faults.map((f) => f.fault).filter((f) => !PEER_FAULTS.has(f)))];
  const why: string[] = [];
  if (faults.length) why.push(`its faults ${faults.join(', ')} (a peer run injects only ${[...PEER_FAULTS].join(', ')})`);
  if (s.scheduler.nodes.length || s.scheduler.schedules.length) why.push("stampede's cron scheduler nodes");
  if (Object.keys(s.queueLimits).length) why.push("stampede's queue limits");
  if (s.relays || s.archiver) why.push("stampede's outbox relays or archiver");
  if (s.downstream) why.push('the harness downstream (per-key call accounting is stampede-specific)');
  if (s.tenants) why.push("tenants (stampede's fairness keys)");
  // A herd of one tenant is stampede's fairness key; a herd of downstream calls, the harness downstream's.
  if (s.faults.some((f) => f.fault === 'thundering-herd' && (f.fairnessKey !== undefined || f.kind === 'downstream'))) why.push('a thundering-herd with a fairnessKey or of downstream jobs');
  if (s.engine.mutant) why.push('a mutant (a patch of stampede)');
  if (s.mix.some((m) => m.kind === 'outbox' || m.kind === 'downstream')) why.push('outbox or downstream jobs');
  if (s.mix.some((m) => m.payloadBytes !== undefined)) why.push("padded payloads (payloadBytes: stampede's maxPayloadBytes)");
  const forPeers = Object.keys(s.peerSettings ?? {});
  if (s.peerSettings && !forPeers.includes(engine)) why.push(`adapter settings for ${forPeers.join(', ')} only (peerSettings: a control of that peer's behaviour)`);
  return why.length ? `scenario ${s.name} cannot run against ${engine}: it uses ${why.join('; ')}` : null;
}

/** The peer's installed version (or the alias's, for a known-bug control). */
export function peerVersion(pkg: string): string {
  const name = process.env.STAMPEDE_PEER_PACKAGE || pkg;
  for (const from of [`${process.cwd()}/`, import.meta.url]) {
    try {
      const entry = createRequire(from).resolve(name);
      const root = entry.slice(0, entry.lastIndexOf(`/node_modules/${name}/`) + `/node_modules/${name}/`.length);
      return JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version;
    } catch {
      // not there: the next place, or not installed
    }
  }
  return 'not installed';
}

/** A peer's worker process: the harness's peer worker entry, told which engine to run. */
export function peerWorkerProcess(engine: string, s: Scenario, slot: number, gen: number): WorkerProcessSpec {
  return {
    script: 'harness/engines/peer-worker.ts',
    args: ['--engine', engine, '--worker-id', `worker-${slot}.${gen}`, '--concurrency', String(s.concurrency)],
    env: {
      STAMPEDE_QUEUES: s.lanes.map((l) => l.queue).join(','),
      STAMPEDE_SHUTDOWN_GRACE_MS: String(WORKER_SHUTDOWN_GRACE_MS),
      ...(process.env.STAMPEDE_PEER_PACKAGE ? { STAMPEDE_PEER_PACKAGE: process.env.STAMPEDE_PEER_PACKAGE } : {}),
    },
  };
}
