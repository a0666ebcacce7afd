import { describe, expect, it } from 'vitest';
import { checkFleetRecovers } from '../harness/checkers/fleet-recovers.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h, job } from './support/history-builder.ts';

describe('fleet-recovers', () => {
  // One sample a second; the incident is 3-5 s, recovery allowed 2 s after it.
  const samples = (ages: number[]) => ages.map((a, i) => h.sample(i * 1_000, { orders: a }));
  const bounds = { sloMs: 1_000, incident: { fromMs: 3_000, toMs: 5_000 }, maxRecoverMs: 2_000 };
  const check = (history: HistoryEvent[]) => checkFleetRecovers(history, finalState([]), bounds);

  it('passes when the age is back under the SLO and the crashes stopped, within the bound', () => {
    const r = check([...samples([100, 100, 100, 9_000, 4_000, 3_000, 500, 200, 100]), h.exited(3_500, 'worker-0'), h.exited(4_500, 'worker-1')]);
    expect(r.pass).toBe(true);
    expect(r.figure).toBe(
      'recovered 1,000 ms after the incident (3,000-5,000 ms): age last over the SLO at 5,000 ms (3,000 ms); last worker crash at 4,500 ms (0 of 2 after the window); the run ended at 8,000 ms',
    );
    expect(r.judged).toEqual({ n: 4, what: 'samples after the incident' });
  });

  it('fails (negative control) while a poison still kills workers after the age is back: the crash loop is not over', () => {
    const crashes = [5_500, 6_500, 7_500, 8_500].map((t) => h.exited(t, 'worker-0'));
    const r = check([...samples([100, 100, 100, 9_000, 4_000, 500, 200, 100, 100, 100, 100]), ...crashes]);
    expect(r.pass).toBe(false);
    expect(r.figure).toMatch(/^recovered 4,000 ms after the incident .*last worker crash at 8,500 ms \(4 of 4 after the window\)/);
  });

  it('fails when the age relapses over the SLO, or has not recovered when the run ends', () => {
    const relapse = check(samples([100, 100, 100, 9_000, 4_000, 500, 200, 3_000, 100]));
    expect(relapse.pass).toBe(false);
    expect(relapse.figure).toMatch(/^recovered 3,000 ms after/);
    const never = check(samples([100, 100, 100, 9_000, 4_000, 3_000, 3_000]));
    expect(never.pass).toBe(false);
    expect(never.figure).toMatch(/^not recovered: age last over the SLO at 6,000 ms/);
  });

  it('is not recovered when the run ended with a due job unfinished (a poison still crash-looping when the drain gave up)', () => {
    const history = [...samples([100, 100, 100, 9_000, 500, 200, 100]), h.exited(5_500, 'worker-0')];
    const r = checkFleetRecovers(history, finalState([job(1, 'claimed', { attempts: 3 }), job(2, 'done')]), bounds);
    expect(r.pass).toBe(false);
    expect(r.figure).toMatch(/^not recovered: 1 due job unfinished when the run ended; /);
    expect(checkFleetRecovers(history, finalState([job(2, 'done')]), bounds).pass).toBe(true);
  });

  it('does not count a worker the harness killed on purpose (worker-kill names its pid)', () => {
    const kill = h.fault(7_000, 'worker-kill', { target: 'worker-0', pid: 42 });
    const r = check([...samples([100, 100, 100, 9_000, 500, 200, 100, 100, 100]), kill, h.exited(7_010, 'worker-0', 'SIGKILL', 42)]);
    expect(r.pass).toBe(true);
    expect(r.figure).toMatch(/no worker crash/);
  });

  it('is unknown without an incident, or without a sample after it', () => {
    expect(checkFleetRecovers(samples([100, 200]), finalState([]), { ...bounds, incident: null }).pass).toBe('unknown');
    expect(check(samples([100, 200, 300, 9_000])).pass).toBe('unknown');
  });
});
