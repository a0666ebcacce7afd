import { queryPatch, type Mutant } from './types.ts';

/** Completion and failure no longer check the lease token: whoever finishes last wins. ($2 stays referenced so FailJob still prepares.) */
export const noFencing: Mutant = {
  breaks: 'completion is not fenced on the lease token, so a worker that lost its lease overwrites the new owner',
  caughtBy: 'no-stale-completion',
  scenario: 'slow-worker-no-heartbeat',
  changes: [
    queryPatch('engine/worker/worker.sql', 'CompleteJobs', [{ find: 'WHERE j.id = r.id AND j.lease_token = r.token', replace: "WHERE j.id = r.id AND j.state = 'claimed'" }]),
    queryPatch('engine/worker/worker.sql', 'FailJob', [{ find: "AND j.state = 'claimed' AND j.lease_token = $2", replace: "AND j.state = 'claimed' AND (true OR j.lease_token = $2)" }]),
  ],
};
