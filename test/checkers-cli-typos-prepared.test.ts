// cli-refuses-bad-input and prepared-statements-honoured on small hand-written histories, with violating ones.
import { describe, expect, it } from 'vitest';
import { checkCliRefusesBadInput } from '../harness/checkers/cli-refuses-bad-input.ts';
import { checkPreparedStatements, preparedStatementsHonoured } from '../harness/checkers/prepared-statements-honoured.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h } from './support/history-builder.ts';

const final = finalState([]);

/** A typo at the command line as the cli-typos fault records it; by default refused well and nothing changed. */
function typo(command: string[], input: string, x: Partial<Extract<HistoryEvent, { type: 'control:typo' }>> = {}): HistoryEvent {
  const state = { 17: 'dead', orders: 'running maxInFlight=none maxStartsPerSecond=none' };
  return {
    t: 9_000, node: 'operator-cli', type: 'control:typo', command, input, exitCode: 2,
    answer: `stampede control: ${command[0]}: expected something else, got ${input}`, before: state, after: state, auditBefore: 0, auditAfter: 0, ...x,
  };
}

describe('cli-refuses-bad-input', () => {
  it('passes typos refused with exit 2 naming the input, nothing changed', () => {
    const r = checkCliRefusesBadInput([typo(['retry', '17x'], '17x'), typo(['pasue', 'orders'], '"pasue"'), typo(['pause', 'orders'], '--by')], final);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 3, what: 'typos at the command line' });
  });

  it('fails (negative control) a typo that ran (exit 0, the job retried, audited), a refusal that does not name the input, an exit 1', () => {
    const ran = typo(['retry', '17x'], '17x', { exitCode: 0, answer: 'retried job 17 (queue orders, was dead)', after: { 17: 'pending', orders: 'running maxInFlight=none maxStartsPerSecond=none' }, auditAfter: 1 });
    const r = checkCliRefusesBadInput([ran], final);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([
      expect.objectContaining({ expected: 'exit 2 (refused)' }),
      expect.objectContaining({ target: '17', before: 'dead', after: 'pending' }),
      expect.objectContaining({ auditRows: '0 -> 1' }),
    ]);
    expect(checkCliRefusesBadInput([typo(['retry', '17x'], '17x', { answer: 'stampede control: retry job 17: it is done' })], final).pass).toBe(false);
    expect(checkCliRefusesBadInput([typo(['retry', '17x'], '17x', { exitCode: 1 })], final).pass).toBe(false);
  });

  it('is unknown with no typo', () => {
    expect(checkCliRefusesBadInput([], final).pass).toBe('unknown');
  });
});

const settings = (node: string, preparedStatements: boolean): HistoryEvent =>
  ({ t: 100, node, type: 'worker:settings', workerId: `${node}.1`, maxCrashes: 3, agingMs: 1_000, rescue: true, preparedStatements, queues: {} }) as HistoryEvent;
const binds = (node: string, namedBinds: number, unnamedBinds: number): HistoryEvent => ({ t: 30_000, node, type: 'link:statements', namedBinds, unnamedBinds });
const done = (t: number, jobId: number, node: string): HistoryEvent[] => [h.claim(t, jobId, node), h.completed(t + 10, jobId, node)];

describe('prepared-statements-honoured', () => {
  const bounds = preparedStatementsHonoured.defaults;
  const base = [settings('worker-0', true), settings('worker-1', false), ...done(1_000, 1, 'worker-1'), ...done(1_000, 2, 'worker-0')];

  it('passes a worker without prepared statements that bound none named and completed jobs, beside one that bound named ones', () => {
    const r = checkPreparedStatements([...base, binds('worker-0', 800, 40), binds('worker-1', 0, 900)], final, bounds);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 900, what: 'statements bound through the links of workers without prepared statements' });
  });

  it('fails (negative control) a worker without prepared statements whose link carried named ones', () => {
    const r = checkPreparedStatements([...base, binds('worker-0', 800, 40), binds('worker-1', 650, 250)], final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ node: 'worker-1', namedBinds: 650, unnamedBinds: 250 }]);
  });

  it('is unknown when the proxy saw no named statement from anyone, when the worker bound too few, or completed nothing', () => {
    expect(checkPreparedStatements([...base, binds('worker-0', 0, 800), binds('worker-1', 0, 900)], final, bounds).pass).toBe('unknown');
    expect(checkPreparedStatements([...base, binds('worker-0', 800, 40), binds('worker-1', 0, 20)], final, bounds).pass).toBe('unknown');
    const idle = [settings('worker-0', true), settings('worker-1', false), ...done(1_000, 2, 'worker-0'), binds('worker-0', 800, 40), binds('worker-1', 0, 900)];
    expect(checkPreparedStatements(idle, final, bounds).pass).toBe('unknown');
  });
});
