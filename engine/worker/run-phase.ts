/**
 * Where one job run stands, as one value (a JobRun's `phase`), and the moves it may make: written once here, so
 * an illegal move throws in one place instead of being a combination of flags nobody meant.
 *
 * - `waiting`: claimed, waiting for a slot (claim-ahead); its lease is renewed from the claim.
 * - `running`: the handler runs; heartbeats renew the lease.
 * - `finishing`: effectOnce's transaction is under way. A renewal that finds no lease proves nothing now (our own
 *   commit may have cleared it): the transaction's fence decides, so the heartbeat stands down.
 * - `completed-in-tx`: that transaction completed the job (it stays so once the handler returns).
 * - `settled`: the handler returned (or threw); the outcome is being decided and written.
 * - `lost`: a renewal found the lease gone (or the job cancelled): the new owner decides this job's fate.
 * - `expired`: no renewal landed for a whole lease; the claim is handed back, fenced, if it is still ours.
 * - `handed-back`: shutdown abandoned it; the worker hands the claim back.
 * - `recorded`: the outcome is written, or given up on. Final.
 */
export type RunPhase = 'waiting' | 'running' | 'finishing' | 'completed-in-tx' | 'settled' | 'lost' | 'expired' | 'handed-back' | 'recorded';

/** The legal moves, from each phase. */
const MOVES: { readonly [P in RunPhase]: readonly RunPhase[] } = {
  waiting: ['running', 'lost', 'expired', 'handed-back'],
  running: ['finishing', 'settled', 'lost', 'expired', 'handed-back'],
  // Back to running: the transaction rolled back, or committed without completing the job.
  // Settled: a handler that returned without awaiting its effectOnce.
  finishing: ['running', 'completed-in-tx', 'settled', 'handed-back'],
  // Completed in its transaction: it stays so through the handler's return, to be recorded as completed.
  'completed-in-tx': ['handed-back', 'recorded'],
  // Lost: a renewal under way as the handler returned found the lease gone (the outcome waited for it).
  settled: ['lost', 'handed-back', 'recorded'],
  lost: ['recorded'],
  expired: ['recorded'],
  'handed-back': ['recorded'],
  recorded: [],
};

const LEGAL: { readonly [P in RunPhase]: Readonly<Partial<Record<RunPhase, true>>> } = Object.fromEntries(
  Object.entries(MOVES).map(([from, tos]) => [from, Object.fromEntries(tos.map((to) => [to, true]))]),
) as never;

/** Whether a run may move from `from` to `to`. */
export function canMove(from: RunPhase, to: RunPhase): boolean {
  return LEGAL[from][to] === true;
}

/** `to`, when the move from `from` is legal; throws naming both otherwise (a bug in the runner, never a job's fault). */
export function move(jobId: number, from: RunPhase, to: RunPhase): RunPhase {
  if (LEGAL[from][to] !== true) throw new Error(`job ${jobId}: a run cannot go from ${from} to ${to}`);
  return to;
}

/** Phases in which the lease is still this run's to renew. */
export function holdsLease(phase: RunPhase): boolean {
  return phase === 'waiting' || phase === 'running' || phase === 'finishing' || phase === 'completed-in-tx';
}
