// cli-verbs on small hand-written histories, with violating ones.
import { describe, expect, it } from 'vitest';
import { checkCliVerbs } from '../harness/checkers/cli-verbs.ts';
import type { EventOf, HistoryEvent, OperatorVerb } from '../harness/history.ts';
import { finalState, h } from './support/history-builder.ts';

const final = finalState([]);

/** A `stampede control` call as the harness records it (operator:action via cli). */
function call(t: number, verb: OperatorVerb, command: string[], exitCode: number, answer: string, x: Partial<EventOf<'operator:action'>>): HistoryEvent {
  return {
    t, node: 'nemesis', type: 'operator:action', dbBefore: t - 50, seq: 1, verb, via: 'cli', exitCode, command, by: 'oncall-cli', reason: `r${t}`,
    jobIds: [], outcome: exitCode === 0 ? 'ok' : 'refused', answer, ...(exitCode === 0 ? {} : { refusal: `exit ${exitCode}` }), before: {}, after: {}, ...x,
  };
}
const claimed = (t: number, jobId: number): HistoryEvent => h.claim(t, jobId, 'worker-0', 2, { queue: 'orders', dbTime: t });

const good = [
  call(1_000, 'dead-letter', ['dead-letter', '7'], 0, 'dead-lettered job 7 (queue orders, was claimed)', { jobIds: [7], before: { 7: 'claimed' }, after: { 7: 'dead' } }),
  call(2_000, 'cancel', ['cancel', '8'], 0, 'cancelled job 8 (queue orders, was pending)', { jobIds: [8], before: { 8: 'pending' }, after: { 8: 'cancelled' } }),
  call(3_000, 'cancel', ['cancel', '9'], 2, 'stampede control: cancel job 9: it is done; expected pending or failed or claimed', { jobIds: [9], before: { 9: 'done' }, after: { 9: 'done' } }),
  call(4_000, 'retry', ['retry', '5'], 0, 'retried job 5 (queue orders, was dead)', { jobIds: [5], before: { 5: 'dead' }, after: { 5: 'pending' } }),
  claimed(4_100, 5),
  call(5_000, 'set-limits', ['limit', 'orders', '--max-in-flight', '12', '--max-starts-per-second', '400'], 0, 'orders\trunning\tmax-in-flight=12', {
    queue: 'orders', before: { orders: 'running maxInFlight=8 maxStartsPerSecond=none' }, after: { orders: 'running maxInFlight=12 maxStartsPerSecond=400' },
  }),
  call(6_000, 'pause', ['pause', 'ops', '--new'], 0, 'paused ops at 2026-12-07T10:00:00.000Z', { queue: 'ops', before: { ops: 'running maxInFlight=none maxStartsPerSecond=none' }, after: { ops: 'paused maxInFlight=none maxStartsPerSecond=none' } }),
];

describe('cli-verbs', () => {
  it('passes each command line that did its verb (exit 0, naming its target) or refused it (exit 2) changing nothing', () => {
    const r = checkCliVerbs(good, final);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 6, what: 'stampede control calls and the reads after them' });
    expect(r.figure).toContain('5 done, exit 0; 1 refused, exit 2');
  });

  it('fails (negative control) a dead-letter that cancelled, a retried dead job never claimed, a limit not set, a refusal that changed its job, an exit 1', () => {
    const cases: [HistoryEvent[], string][] = [
      [[call(1_000, 'dead-letter', ['dead-letter', '7'], 0, 'cancelled job 7 (queue orders, was claimed)', { jobIds: [7], before: { 7: 'claimed' }, after: { 7: 'cancelled' } })], 'job 7 is cancelled after dead-letter, expected dead'],
      [[call(4_000, 'retry', ['retry', '5'], 0, 'retried job 5 (queue orders, was dead)', { jobIds: [5], before: { 5: 'dead' }, after: { 5: 'pending' } })], 'dead job 5 retried but never claimed again'],
      [[call(5_000, 'set-limits', ['limit', 'orders', '--max-in-flight', '12'], 0, 'orders\trunning', { queue: 'orders', before: { orders: 'running maxInFlight=8 maxStartsPerSecond=none' }, after: { orders: 'running maxInFlight=8 maxStartsPerSecond=none' } })], 'after limit --max-in-flight 12'],
      [[call(3_000, 'cancel', ['cancel', '9'], 2, 'stampede control: cancel job 9: it is done', { jobIds: [9], before: { 9: 'claimed' }, after: { 9: 'cancelled' } })], 'claimed -> cancelled'],
      [[call(3_000, 'cancel', ['cancel', '9'], 1, 'stampede control: connection refused', { jobIds: [9], before: { 9: 'claimed' }, after: { 9: 'claimed' } })], 'exit 0 (done) or 2 (refused)'],
      [[call(2_000, 'cancel', ['cancel', '8'], 0, 'cancelled', { jobIds: [8], before: { 8: 'pending' }, after: { 8: 'cancelled' } })], 'does not name job 8'],
    ];
    for (const [hist, why] of cases) {
      const r = checkCliVerbs(hist, final);
      expect(r.pass).toBe(false);
      expect(JSON.stringify(r.examples)).toContain(why);
    }
  });

  /** A read right after the limit of `good` (5 s): `show orders` or `audit --queue orders`, printing `output`. */
  const readBack = (command: string[], output: string, exitCode = 0): HistoryEvent => ({
    t: 5_100, node: 'operator-cli', type: 'control:read', command, exitCode, output, verb: 'set-limits', queue: 'orders', by: 'oncall-cli', state: 'running maxInFlight=12 maxStartsPerSecond=400',
  });
  const shown = 'orders\trunning\tmax-in-flight=12\tmax-starts-per-second=400\tmax-in-flight-per-key=none\tsequential=off\n';
  const audited = '2026-12-07T10:00:05.000Z\toncall-cli\tset-limits\torders\tr5000\n';

  it('passes show and audit right after a limit set at the command line when they show it', () => {
    const r = checkCliVerbs([...good, readBack(['show', 'orders'], shown), readBack(['audit', '--queue', 'orders', '--limit', '20'], audited)], final);
    expect(r.pass).toBe(true);
    expect(r.judged?.n).toBe(8);
  });

  it('fails (negative control) a show that prints another limit or no line, an audit that lists no change, a read that exits 2', () => {
    const cases: [HistoryEvent, string][] = [
      [readBack(['show', 'orders'], shown.replace('max-in-flight=12', 'max-in-flight=8')), 'but the queue held maxInFlight=12'],
      [readBack(['show', 'orders'], 'no paused or configured queues\n'), 'printed no line for queue orders'],
      [readBack(['audit', '--queue', 'orders', '--limit', '20'], 'no actions recorded\n'), 'lists no set-limits of orders by oncall-cli'],
      [readBack(['show', 'orders'], 'stampede control: unknown command', 2), 'exited 2'],
    ];
    for (const [read, why] of cases) {
      const r = checkCliVerbs([...good, read], final);
      expect(r.pass).toBe(false);
      expect(JSON.stringify(r.examples)).toContain(why);
    }
  });

  it('is unknown with no call through the command line', () => {
    const viaApi = { ...(good[0] as EventOf<'operator:action'>), via: 'api' as const };
    expect(checkCliVerbs([viaApi], final).pass).toBe('unknown');
    expect(checkCliVerbs([], final).pass).toBe('unknown');
  });
});
