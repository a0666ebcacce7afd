import { describe, expect, it } from 'vitest';
import { ManualClock } from '../engine/clock.ts';
import { createLogger, foldLogLines } from '../engine/log.ts';

function capture() {
  const clock = new ManualClock(0);
  const lines: string[] = [];
  const log = createLogger('cron:scheduler-0', 'info', { clock, sink: (l) => lines.push(l), summaryEveryMs: 30_000, repeatWindowMs: 60_000 });
  return { clock, lines, log };
}

describe('repeated warnings fold into one line', () => {
  it('prints the first, then a count with first and last time when another message comes', () => {
    const { clock, lines, log } = capture();
    for (let i = 0; i < 40; i++) {
      log.warn('refusing to materialize', { clock: 'node clock 3600 s ahead of the database' });
      clock.advance(500);
    }
    log.info('clock jumped');
    expect(lines).toEqual([
      'WARN cron:scheduler-0: refusing to materialize clock=node clock 3600 s ahead of the database',
      'WARN cron:scheduler-0: refusing to materialize (x40 over 20 s): clock=node clock 3600 s ahead of the database',
      'INFO cron:scheduler-0: clock jumped',
    ]);
  });

  it('while a warning keeps repeating, prints its running count every summaryEveryMs, not every repeat', () => {
    const { clock, lines, log } = capture();
    for (let i = 0; i <= 130; i++) {
      log.warn('claim failed; backing off');
      clock.advance(500);
    }
    expect(lines).toEqual([
      'WARN cron:scheduler-0: claim failed; backing off',
      'WARN cron:scheduler-0: claim failed; backing off (x61 over 30 s)',
      'WARN cron:scheduler-0: claim failed; backing off (x121 over 60 s)',
    ]);
  });

  it('negative control: different messages, and one repeat after a quiet spell, print as they are', () => {
    const { clock, lines, log } = capture();
    log.warn('a');
    log.warn('b');
    clock.advance(61_000);
    log.warn('b');
    log.child('sub').warn('a');
    expect(lines).toEqual(['WARN cron:scheduler-0: a', 'WARN cron:scheduler-0: b', 'WARN cron:scheduler-0: b', 'WARN cron:scheduler-0:sub: a']);
  });
});

describe('relayed log lines of other processes', () => {
  it('fold identical lines across the restarts of one slot; other lines pass as they are', () => {
    const clock = new ManualClock(0);
    const lines: string[] = [];
    const relay = foldLogLines({ clock, sink: (l) => lines.push(l), scopeOf: (s) => s.replace(/(worker-\d+)\.\d+/, '$1') });
    for (let gen = 1; gen <= 5; gen++) {
      relay(`WARN worker:worker-0.${gen}: running the "no-crash-detection" mutant: a deliberately broken engine`);
      clock.advance(2_000);
    }
    relay('WARN worker:worker-1.1: claim failed; backing off attempt=1');
    relay('not a log line');
    expect(lines).toEqual([
      'WARN worker:worker-0: running the "no-crash-detection" mutant: a deliberately broken engine',
      'WARN worker:worker-1: claim failed; backing off attempt=1',
      'not a log line',
    ]);
  });
});
