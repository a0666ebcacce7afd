// dashboard-bound-as-told on small hand-written histories, with violating ones.
import { describe, expect, it } from 'vitest';
import { checkDashboardBoundAsTold, dashboardBoundAsTold } from '../harness/checkers/dashboard-bound-as-told.ts';
import type { EventOf, HistoryEvent } from '../harness/history.ts';
import { finalState } from './support/history-builder.ts';

const final = finalState([]);
const bounds = dashboardBoundAsTold.defaults;

/** `stampede dashboard` as the dashboard-cli fault records it; by default started well on 127.0.0.1:41234 and stopped. */
function started(x: Partial<EventOf<'dashboard:cli'>> = {}): HistoryEvent {
  return {
    t: 3_500, node: 'operator-cli', type: 'dashboard:cli', seq: 4, askedPort: 41_234,
    printed: 'stampede dashboard: open http://127.0.0.1:41234/?token=<token>', host: '127.0.0.1', port: 41_234,
    tokenChars: 32, tokenBase64url: true, offLoopback: ['192.0.2.2'], exitCode: 0, stderr: '', ...x,
  };
}

/** One probe; by default answered as the promise requires for where it went and what token it carried. */
function probe(where: 'printed' | 'off-loopback', token: 'printed' | 'none' | 'wrong', x: Partial<EventOf<'dashboard:probe'>> = {}): HistoryEvent {
  const good = where === 'off-loopback' ? { outcome: 'refused' as const, status: null } : { outcome: 'answered' as const, status: token === 'printed' ? 200 : 401 };
  const host = where === 'printed' ? '127.0.0.1' : '192.0.2.2';
  return { t: 3_400, node: 'operator-cli', type: 'dashboard:probe', seq: 4, url: `http://${host}:41234/`, where, token, error: null, ...good, ...x };
}

const wellBound = [probe('printed', 'printed'), probe('printed', 'none'), probe('printed', 'wrong'), probe('off-loopback', 'printed'), started()];

describe('dashboard-bound-as-told', () => {
  it('passes a dashboard that printed 127.0.0.1 and the port asked, served the page with the token only, and nothing off loopback', () => {
    const r = checkDashboardBoundAsTold(wellBound, final, bounds);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 4, what: 'connections to the dashboard started at the command line' });
  });

  it('fails (negative control) a dashboard bound to 0.0.0.0: it printed that host and answered off loopback', () => {
    const r = checkDashboardBoundAsTold(
      [
        probe('printed', 'printed', { url: 'http://0.0.0.0:41234/?token=<token>' }),
        probe('printed', 'none'),
        probe('off-loopback', 'printed', { outcome: 'answered', status: 200 }),
        started({ printed: 'stampede dashboard: open http://0.0.0.0:41234/?token=<token>', host: '0.0.0.0' }),
      ],
      final,
      bounds,
    );
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([
      expect.objectContaining({ host: '0.0.0.0', expected: 'host 127.0.0.1 (no --host given)' }),
      expect.objectContaining({ token: 'printed', outcome: 'answered', status: 200, expected: 'connection refused (nothing listens there)' }),
    ]);
  });

  it('fails a page served without the token, another port, a short token, no address printed, and an exit other than 0', () => {
    const fails = (events: HistoryEvent[]) => checkDashboardBoundAsTold(events, final, bounds).pass;
    expect(fails([probe('printed', 'printed'), probe('printed', 'wrong', { status: 200 }), started()])).toBe(false);
    expect(fails([probe('printed', 'printed', { status: 401 }), probe('printed', 'none'), started()])).toBe(false);
    expect(fails([probe('printed', 'printed'), probe('printed', 'none'), started({ port: 7676 })])).toBe(false);
    expect(fails([probe('printed', 'printed'), probe('printed', 'none'), started({ tokenChars: 8 })])).toBe(false);
    expect(fails([started({ printed: null, host: null, port: null, tokenChars: null, tokenBase64url: null, exitCode: 2, stderr: 'stampede dashboard: --port: is in use' })])).toBe(false);
    expect(fails([probe('printed', 'printed'), probe('printed', 'none'), started({ exitCode: null })])).toBe(false);
  });

  it('is unknown with no start, and without a judged probe with the token and one without it', () => {
    expect(checkDashboardBoundAsTold([], final, bounds).pass).toBe('unknown');
    expect(checkDashboardBoundAsTold([probe('printed', 'printed'), started()], final, bounds).pass).toBe('unknown');
    // A probe that timed out is not judged either way.
    expect(checkDashboardBoundAsTold([probe('printed', 'printed'), probe('printed', 'none', { outcome: 'failed', status: null, error: 'timeout' }), started()], final, bounds).pass).toBe('unknown');
  });

  it('says so when the machine had no non-loopback address, rather than pass that half silently', () => {
    const r = checkDashboardBoundAsTold([probe('printed', 'printed'), probe('printed', 'none'), probe('printed', 'wrong'), started({ offLoopback: [] })], final, bounds);
    expect(r.pass).toBe(true);
    expect(r.figure).toContain('the off-loopback half unjudged: this machine has no non-loopback address');
  });
});
