import { loadQueries } from '../sql.ts';

export const workerQueries = loadQueries(new URL('./worker.sql', import.meta.url), [
  'ClaimJobs',
  'SuspectsWaiting',
  'ClaimSuspect',
  'RenewLease',
  'JobState',
  'CompleteJobs',
  'FailJob',
  'ReleaseJobs',
  'DeferJob',
  'RecordEffectKey',
  'CompleteJobInTx',
  'ListenForEnqueues',
] as const);

export const livenessQueries = loadQueries(new URL('./liveness.sql', import.meta.url), ['StartWorker', 'TouchWorker', 'ForgetWorker'] as const);

export const rescuerQueries = loadQueries(new URL('./rescuer.sql', import.meta.url), ['RescueExpiredLeases'] as const);
