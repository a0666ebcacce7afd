import { graphileAdapter } from './graphile-worker.ts';
import { pgBossAdapter } from './pg-boss.ts';
import { type EngineAdapter, type EngineName, type PeerAdapter } from './types.ts';

/**
 * stampede as an engine adapter: it runs through the harness's own runner
 * (harness/runner/run.ts) exactly as before, and promises everything the
 * invariants judge (README Guarantees), so no checker is "not promised" for it.
 */
export const stampedeAdapter: EngineAdapter = {
  name: 'stampede',
  version: () => 'this checkout',
  promises: {
    durableEnqueue: true,
    crashRecovery: true,
    releaseOnStop: true,
    heartbeats: true,
    exclusiveClaim: true,
    fencing: true,
    effectOnce: true,
    deadLetters: true,
    crashLoopVerdict: true,
    priorities: true,
    delayedJobs: true,
    cronOccurrenceKeys: true,
    stampedeObservability: true,
    source: {},
  },
  // A scenario with peer settings shows one peer's own behaviour (a known bug's control): stampede has nothing to show there.
  inapplicable: (s) => (s.peerSettings ? `scenario ${s.name} cannot run against stampede: its peerSettings are for ${Object.keys(s.peerSettings).join(', ')} only` : null),
};

export const ENGINES: Record<EngineName, EngineAdapter> = {
  stampede: stampedeAdapter,
  'graphile-worker': graphileAdapter,
  'pg-boss': pgBossAdapter,
};

/** A peer engine's adapter, or undefined for stampede (which runs through the harness's own runner). */
export function peerAdapter(name: EngineName): PeerAdapter | undefined {
  return name === 'stampede' ? undefined : (ENGINES[name] as PeerAdapter);
}

