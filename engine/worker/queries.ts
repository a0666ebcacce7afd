import { loadQueries } from '../sql.ts';

export const workerQueries = loadQueries(new URL('./worker.sql', import.meta.url), [
  'ClaimJobs',
  'SuspectsWaiting',
  'ClaimSuspect',
  'RenewLease',
  'CompleteJobs',
  'FailJob',
  'ReleaseJobs',
  'RecordEffectKey',
  'CompleteJobInTx',
] as const);

export const rescuerQueries = loadQueries(new URL('./rescuer.sql', import.meta.url), ['RescueExpiredLeases'] as const);
