import { loadQueries } from '../../engine/sql.ts';

export const harnessQueries = loadQueries(new URL('./harness.sql', import.meta.url), [
  'CreateHarnessTables',
  'SetDependencyOutage',
  'ReadDependency',
  'ArmStopPoint',
  'TakeStopPoint',
  'CloseStopPoint',
  'RecordEffect',
  'FinalJobs',
  'FinalDeadLetters',
  'FinalEffects',
  'FinalEffectRows',
  'Unfinished',
  'DueInQueue',
  'TerminateWorkerBackends',
  'HoldXmin',
  'DbNow',
  'ServerFacts',
  'HarnessQueueState',
  'RewindScheduleProgress',
  'RewindProgressBy',
] as const);
