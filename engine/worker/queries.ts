import { loadQueries } from '../sql.ts';

export const workerQueries = loadQueries(new URL('./worker.sql', import.meta.url), [
  'ClaimJobs',
  'SuspectsWaiting',
  'ClaimSuspect',
  'SelectDueIdsUnlocked',
  'ClaimIdsUnchecked',
  'RenewLease',
  'JobState',
  'CompleteJobs',
  'CompleteJobsUnfenced',
  'FailJob',
  'ReleaseJobs',
  'RecordEffectKey',
  'EffectKeyExists',
  'CompleteJobInTx',
] as const);

export const rescuerQueries = loadQueries(new URL('./rescuer.sql', import.meta.url), ['RescueExpiredLeases'] as const);
