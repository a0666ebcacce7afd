import type { JobState } from '../job.ts';

/**
 * An operator action that stampede refused because it makes no sense for
 * what it found (a finished job, an unknown queue). Nothing was changed.
 * `verb` is the action, `target` the job or queue it named.
 */
export class ControlRefusedError extends Error {
  override name = 'ControlRefusedError';
  constructor(
    readonly verb: string,
    readonly target: string,
    message: string,
  ) {
    super(`${verb} ${target}: ${message}`);
  }
}

/** No job has this id (in the hot table: archived jobs are done and cannot be acted on). */
export class JobNotFoundError extends ControlRefusedError {
  override name = 'JobNotFoundError';
  constructor(verb: string, readonly jobId: number) {
    super(verb, `job ${jobId}`, 'no such job (archived jobs are done and cannot be changed)');
  }
}

/** The job is in a state the verb does not apply to; `expected` lists the states it does. */
export class JobStateError extends ControlRefusedError {
  override name = 'JobStateError';
  constructor(
    verb: string,
    readonly jobId: number,
    readonly state: JobState,
    readonly expected: readonly JobState[],
    hint = '',
  ) {
    super(verb, `job ${jobId}`, `it is ${state}; expected ${expected.join(' or ')}${hint ? ` (${hint})` : ''}`);
  }
}

/** Why a queue was refused as unknown, and the way past it: the API's option (`allowNew`), or the CLI's flag (`--new`). */
export function unknownQueueReason(optIn: string): string {
  return `no job, dead letter, schedule or setting names it; check the spelling, or pass ${optIn} to configure a queue before its first job`;
}

/** No job, dead letter, schedule or setting names this queue: most likely a typo. */
export class UnknownQueueError extends ControlRefusedError {
  override name = 'UnknownQueueError';
  constructor(verb: string, readonly queue: string) {
    super(verb, `queue "${queue}"`, unknownQueueReason('allowNew'));
  }
}

/** Pausing a paused queue, resuming a running one. */
export class QueueStateError extends ControlRefusedError {
  override name = 'QueueStateError';
  constructor(verb: string, readonly queue: string, message: string) {
    super(verb, `queue "${queue}"`, message);
  }
}
