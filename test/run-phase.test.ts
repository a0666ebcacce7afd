// A job run's phase (engine/worker/run-phase.ts): the moves a run makes in each of its lives are legal, any other
// move throws naming the job and both phases, and `recorded` is final.
import { describe, expect, it } from 'vitest';
import { canMove, holdsLease, move, type RunPhase } from '../engine/worker/run-phase.ts';

function walk(...phases: RunPhase[]): RunPhase {
  return phases.reduce((from, to) => move(7, from, to));
}

describe('a job run phase', () => {
  it('allows the paths a run takes', () => {
    expect(walk('waiting', 'running', 'settled', 'recorded')).toBe('recorded');
    expect(walk('waiting', 'running', 'finishing', 'completed-in-tx', 'recorded')).toBe('recorded');
    expect(walk('waiting', 'running', 'finishing', 'running', 'settled', 'lost', 'recorded')).toBe('recorded');
    expect(walk('waiting', 'expired', 'recorded')).toBe('recorded');
    expect(walk('waiting', 'handed-back', 'recorded')).toBe('recorded');
  });

  it('throws on any other move, naming the job and both phases', () => {
    expect(() => move(7, 'recorded', 'running')).toThrow('job 7: a run cannot go from recorded to running');
    expect(() => move(7, 'lost', 'completed-in-tx')).toThrow(/from lost to completed-in-tx/);
    expect(() => move(7, 'expired', 'handed-back')).toThrow(/from expired to handed-back/);
    expect(canMove('completed-in-tx', 'lost')).toBe(false); // its own commit cleared the lease: the fence decided
  });

  it('renews the lease only while the run holds it', () => {
    expect((['waiting', 'running', 'finishing', 'completed-in-tx'] as const).every(holdsLease)).toBe(true);
    expect((['settled', 'lost', 'expired', 'handed-back', 'recorded'] as const).some(holdsLease)).toBe(false);
  });
});
