import type { Scenario } from '../harness/scenario.ts';
import claimAhead from './claim-ahead.ts';
import cronSkew from './cron-skew.ts';
import dbRestart from './db-restart.ts';
import downstreamLimit from './downstream-limit.ts';
import effectsPipeline from './effects-pipeline.ts';
import operatorChaos from './operator-chaos.ts';
import dstFallBack from './dst-fall-back.ts';
import dstSpringForward from './dst-spring-forward.ts';
import poisonHerd from './poison-herd.ts';
import priorityStarvation from './priority-starvation.ts';
import quietHours from './quiet-hours.ts';
import retryStorm from './retry-storm.ts';
import slowWorker from './slow-worker.ts';
import slowWorkerNoHeartbeat from './slow-worker-no-heartbeat.ts';
import slowClock from './slow-clock.ts';
import steady from './steady.ts';
import workerCrash from './worker-crash.ts';
import xminHorizon from './xmin-horizon.ts';
import noisyTenant from './noisy-tenant.ts';
import peerHeartbeatKill from './peer-heartbeat-kill.ts';
import peerStopBigIds from './peer-stop-big-ids.ts';
import peerPoisonHerd from './peer-poison-herd.ts';
import linkFaults from './link-faults.ts';
import weightedTenants from './weighted-tenants.ts';
import networkPartition from './network-partition.ts';
import dbHostFaults from './db-host-faults.ts';
import failoverSync from './failover-sync.ts';
import failoverAsync from './failover-async.ts';
import archiveRetention from './archive-retention.ts';

/** The built-in scenarios by name: `npm run scenario <name>`. */
export const SCENARIOS: Record<string, Scenario> = Object.fromEntries(
  [
    steady,
    workerCrash,
    slowWorker,
    slowWorkerNoHeartbeat,
    slowClock,
    cronSkew,
    dstSpringForward,
    dstFallBack,
    retryStorm,
    priorityStarvation,
    dbRestart,
    xminHorizon,
    networkPartition,
    dbHostFaults,
    failoverSync,
    failoverAsync,
    poisonHerd,
    downstreamLimit,
    effectsPipeline,
    quietHours,
    claimAhead,
    operatorChaos,
    noisyTenant,
    weightedTenants,
    archiveRetention,
  ].map((s) => [s.name, s]),
);

/**
 * Scenarios not in the gate (docs/peers.md): known bugs' controls, which show one peer's own behaviour
 * (`--engine <peer> --peer-package <release>`), link-faults (network-partition's link faults) and
 * peer-poison-herd (poison-herd's poison and herd without its clock step), for any engine. The gate
 * judges stampede with SCENARIOS.
 */
export const PEER_CONTROLS: Record<string, Scenario> = Object.fromEntries([peerHeartbeatKill, peerStopBigIds, linkFaults, peerPoisonHerd].map((s) => [s.name, s]));
