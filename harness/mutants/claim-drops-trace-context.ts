import { queryPatch, type Mutant } from './types.ts';

/**
 * The claim's column list loses trace_parent, as a refactor of its RETURNING
 * would: the job is claimed and runs, but its worker has no trace context, so
 * no attempt continues the trace that enqueued it and a request's trace ends
 * at the enqueue.
 */
export const claimDropsTraceContext: Mutant = {
  breaks: "the claim does not return the job's traceparent, so no attempt continues the trace that enqueued it",
  caughtBy: 'trace-continued',
  scenario: 'slow-worker',
  changes: [queryPatch('engine/worker/worker.sql', 'ClaimJobs', [{ find: 'j.fairness_key, j.trace_parent,', replace: 'j.fairness_key,' }])],
};
