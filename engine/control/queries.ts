import { loadQueries } from '../sql.ts';

export const controlQueries = loadQueries(new URL('./control.sql', import.meta.url), [
  'LockJob',
  'CancelJob',
  'RetryFailedJob',
  'DeadLetterJob',
  'RedriveMany',
  'InsertAudit',
  'ListAudit',
  'KnownQueue',
  'LockQueue',
  'PauseQueue',
  'ResumeQueue',
  'SetQueueLimits',
  'SetKeyWeight',
  'GetKeyWeight',
  'ListKeyWeights',
  'GetQueueControl',
  'ListQueueControls',
] as const);
