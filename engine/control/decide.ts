import type { JobState } from '../job.ts';

/** The job verbs, and the states each applies to. The state machine (migrations/0010_control.sql) enforces the same. */
export const JOB_VERBS = {
  cancel: { from: ['pending', 'failed', 'claimed'], hint: 'a finished job stays as it ended; a dead one can be retried or left' },
  retry: { from: ['failed', 'dead'], hint: 'only a failed job waits for a retry, and only a dead one can be revived' },
  'dead-letter': { from: ['pending', 'failed', 'claimed'], hint: 'only a live job can be dead-lettered' },
} as const satisfies Record<string, { from: readonly JobState[]; hint: string }>;

export type JobVerb = keyof typeof JOB_VERBS;

/** Whether `verb` applies to a job in `state`. Pure. */
export function verbApplies(verb: JobVerb, state: JobState): boolean {
  return (JOB_VERBS[verb].from as readonly JobState[]).includes(state);
}
