import { describe, expect, it } from 'vitest';
import { convictedAsCrashLoop } from '../harness/history.ts';

// The checkers read a crash loop's conviction from the dead letter's code (migration 0018), not from its words.
describe('convictedAsCrashLoop', () => {
  it('goes by the code when the row has one, whatever the reason says', () => {
    expect(convictedAsCrashLoop({ jobId: 1, code: 'crash_loop', reason: 'anything at all' })).toBe(true);
    expect(convictedAsCrashLoop({ jobId: 2, code: 'attempts_exhausted', reason: 'crashed its worker 4 times' })).toBe(false);
    expect(convictedAsCrashLoop({ jobId: 3, code: 'operator', reason: 'dead-lettered by ops: crashed its worker' })).toBe(false);
  });

  it('falls back to the reason only for a run stored before the code was recorded, or a peer engine without codes', () => {
    expect(convictedAsCrashLoop({ jobId: 4, reason: 'crashed its worker 4 times' })).toBe(true);
    expect(convictedAsCrashLoop({ jobId: 5, reason: 'attempts exhausted: Error: boom' })).toBe(false);
  });
});
