/**
 * Operator actions: cancel, retry, dead-letter and redrive jobs; pause,
 * resume and limit queues. Each runs in one transaction, refuses what makes
 * no sense for what it finds (a typed ControlRefusedError, nothing changed),
 * and records who and why in stampede.control_audit. Reference:
 * docs/operating.md.
 */
export { cancelJob, retryJob, deadLetterJob, redriveDeadLetters, type JobActionResult, type RedriveSelection } from './jobs.ts';
export { pauseQueue, resumeQueue, setQueueLimits, setKeyWeight, listKeyWeights, getQueueControl, listQueueControls, type KeyWeight, type QueueControl, type QueueLimits } from './queues.ts';
export { listAudit, type Actor, type AuditEntry } from './audit.ts';
export { JOB_VERBS, verbApplies, type JobVerb } from './decide.ts';
export { ControlRefusedError, JobNotFoundError, JobStateError, UnknownQueueError, QueueStateError } from './errors.ts';
