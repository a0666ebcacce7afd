// The public API of stampede's engine: what a service embeds. docs/api.md documents each export
// (test/api-docs.test.ts holds the two equal); testing aids are in ./testing.ts, internals are not exported.
export { Db, type DbOptions, type Queryable } from './db.ts';
export { migrate } from './migrator.ts';
export { enqueue, enqueueMany, setQueueMaxAttempts, type EnqueueOptions, type EnqueuedJob, type BulkJob } from './enqueue.ts';
export { DEAD_LETTER_CODES, deadLetterDepth, listDeadLetters, type DeadLetter, type DeadLetterCode } from './dead-letters.ts';
export {
  cancelJob,
  retryJob,
  deadLetterJob,
  redriveDeadLetters,
  pauseQueue,
  resumeQueue,
  setQueueLimits,
  setKeyWeight,
  listKeyWeights,
  getQueueControl,
  listQueueControls,
  listAudit,
  ControlRefusedError,
  JobNotFoundError,
  JobStateError,
  UnknownQueueError,
  QueueStateError,
  type JobActionResult,
  type RedriveSelection,
  type QueueControl,
  type QueueLimits,
  type KeyWeight,
  type Actor,
  type AuditEntry,
} from './control/index.ts';
export { Worker } from './worker/worker.ts';
export { LeaseRescuer, type LeaseRescuerOptions } from './worker/rescuer.ts';
export type { WorkerOptions, QueueOptions } from './worker/options.ts';
export { backoffCeilingMs, retryDelayMs, type BackoffPolicy } from './worker/backoff.ts';
export type { Handler, Handlers, JobContext } from './handler.ts';
export type { Job, JobState } from './job.ts';
export { Events, type EngineEvents, type EventName } from './events.ts';
// Test clocks and the seeded random source are in stampede-queue/testing (engine/testing.ts).
export { systemClock, type Clock } from './clock.ts';
export type { Rng } from './rng.ts';
export { ValidationError, LeaseLostError, JobTimeoutError, JobCancelledError } from './errors.ts';
export { ListenError } from './http-listener.ts';
export { DEFAULTS } from './defaults.ts';
export {
  recordIntent,
  outboxDepth,
  listOutbox,
  redriveOutbox,
  OutboxRelay,
  RELAY_DEFAULTS,
  Pruner,
  PRUNER_DEFAULTS,
  type Intent,
  type OutboxRow,
  type OutboxRelayOptions,
  type Deliver,
  type DeliveryContext,
  type PrunerOptions,
} from './effects/index.ts';
export {
  addSchedule,
  listSchedules,
  getSchedule,
  pauseSchedule,
  resumeSchedule,
  removeSchedule,
  type Schedule,
  type ScheduleInput,
} from './cron/schedule.ts';
export { DST_POLICIES, CATCH_UP_POLICIES, type DstPolicy, type CatchUpPolicy } from './cron/policy.ts';
export { CronMaterializer, CRON_DEFAULTS, type CronMaterializerConfig, type TickResult } from './cron/materializer.ts';
export { JobArchiver, ARCHIVE_DEFAULTS, type JobArchiverOptions, type ArchivePass } from './archive/job-archiver.ts';
export {
  createMetrics,
  bindEngineEvents,
  QueueStateSampler,
  MetricsServer,
  type StampedeMetrics,
  type MetricsOptions,
  type QueueStateSamplerConfig,
  type MetricsServerConfig,
} from './metrics/index.ts';
export { ProcessSupervisor, type SupervisorGaveUp, type SupervisorOptions } from './supervisor/supervisor.ts';
export { NodeProcess, type ProcessOptions, type Exit } from './supervisor/node-process.ts';
export { createLogger, type Logger, type LogLevel } from './log.ts';
export { effectKey } from './job.ts';
export { redactSecrets } from './redact.ts';
