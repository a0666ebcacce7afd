import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HistoryEvent } from '../harness/history.ts';
import { analyze, renderReport } from '../reports/render/index.ts';
import { percentile } from '../reports/render/format.ts';
import { REPORT_BASE, reportInput } from './support/history-builder.ts';

/**
 * The report's derivations on small hand-written histories: each case is a
 * negative control for a sentence the report would otherwise write (or fail
 * to write) about the fixture's incident.
 */
const BASE = REPORT_BASE;
const run = reportInput;

const sample = (t: number, age: number): HistoryEvent => ({ t, node: 'sampler', type: 'sample', depthByQueue: { q: age > 0 ? 3 : 0 }, oldestUnclaimedAgeMs: { q: age }, deadLetterDepth: 0, claimed: 0, done: 0, failed: 0, dead: 0 });
const start = (t: number, jobId: number, node: string, pid: number, attempt = 1): HistoryEvent[] => [
  { t, node, type: 'job:claimed', jobId, queue: 'q', priority: 0, attempt, workerId: `${node}:${pid}`, runAt: BASE },
  { t, node, type: 'job:started', jobId, queue: 'q', attempt, workerId: `${node}:${pid}` },
];
const proc = (t: number, node: string, pid: number): HistoryEvent => ({ t, node, type: 'process:started', pid, role: 'worker' });
const crash = (t: number, node: string, pid: number): HistoryEvent => ({ t, node, type: 'process:exited', pid, role: 'worker', code: null, signal: 'SIGKILL', expected: false });

describe('report analysis on hand-written histories', () => {
  it('a quiet run: no cause, no detection, no breach, no action', () => {
    const a = analyze(run([sample(0, 0), sample(1000, 100), sample(2000, 0)]));
    expect(a.rootCause.findings).toEqual(['Nothing in the history points to a cause: no faults, crashes, clock jumps, herds or job failures were recorded.']);
    expect(a.breaches).toEqual([]);
    expect(a.window).toBeNull();
    expect(a.actions).toEqual(['None: every invariant held and the run recovered on its own.']);
  });

  it('blames the job that turns up in every crash, not the bystanders that went down with it', () => {
    const h = [proc(0, 'w1', 1), proc(0, 'w2', 2), ...start(100, 10, 'w1', 1), ...start(150, 11, 'w1', 1), crash(400, 'w1', 1)];
    h.push({ t: 5_400, node: 'rescuer', type: 'lease:rescued', jobId: 10, queue: 'q', attempts: 1, crashCount: 1, dead: false });
    h.push({ t: 5_400, node: 'rescuer', type: 'lease:rescued', jobId: 11, queue: 'q', attempts: 1, crashCount: 1, dead: false });
    const oneCrash = analyze(run([...h]));
    // Negative control: one crash is not a pattern; the report names the jobs in flight but blames none.
    expect(oneCrash.rootCause.crashers).toEqual([]);
    expect(oneCrash.rootCause.findings[0]).toBe('Process 1 on w1 exited unexpectedly at t=+0.4 s with 2 jobs in flight (10 and 11); none of them turned up in another crash, so no job is blamed.');

    h.push(...start(5_500, 10, 'w2', 2, 2), ...start(5_600, 12, 'w2', 2), crash(5_800, 'w2', 2));
    h.push({ t: 10_800, node: 'rescuer', type: 'lease:rescued', jobId: 10, queue: 'q', attempts: 2, crashCount: 2, dead: true });
    h.push({ t: 10_800, node: 'rescuer', type: 'job:dead', jobId: 10, queue: 'q', attempt: 2, code: 'crash_loop', reason: 'crash loop' });
    const a = analyze(run(h));
    expect(a.rootCause.crashers.map((c) => [c.jobId, c.crashes, c.pids])).toEqual([[10, 2, [1, 2]]]);
    expect(a.rootCause.findings).toContain('Job 10 (queue `q`) crashed 2 worker processes (pids 1 and 2 on w1 and w2) between t=+0.4 s and t=+5.8 s before it was dead-lettered at t=+10.8 s after 2 attempts: "crash loop".');
    expect(a.rootCause.findings).toContain('2 other jobs were in flight on the crashed processes and went down with them; their leases expired and they ran again.');
    expect(a.impact.deadLettered.jobIds).toEqual([10]);
  });

  it('a poison that outran crash-loop detection: dead by its attempt budget, and a relapse after the window while it looped', () => {
    const h = [proc(0, 'w1', 1), proc(0, 'w2', 2), ...start(100, 10, 'w1', 1), crash(400, 'w1', 1), ...start(3_500, 10, 'w2', 2, 2), crash(3_800, 'w2', 2)];
    h.push({ t: 7_000, node: 'rescuer', type: 'lease:rescued', jobId: 10, queue: 'q', attempts: 2, crashCount: 2, dead: false });
    h.push({ t: 12_000, node: 'rescuer', type: 'job:dead', jobId: 10, queue: 'q', attempt: 8, code: 'lease_expired', reason: 'attempts exhausted: lease expired; worker presumed dead' });
    h.push(sample(8_000, 0), sample(9_000, 6_000), sample(10_000, 0));
    const a = analyze(run(h.sort((x, y) => x.t - y.t), { incidentWindow: { fromT: 0, toT: 8_500 } }));
    expect(a.mitigation).toContain(
      'Crash-loop detection did not convict job 10: it was dead-lettered only when its attempts ran out, at t=+12.0 s after 8 attempts ("attempts exhausted: lease expired; worker presumed dead"), 11.6 s after its first crash; it crashed 2 processes in all, each a restart and the jobs in flight on it.',
    );
    expect(a.mitigation).toContain('Oldest-unclaimed-age went over the SLO again at t=+9.0 s, after the incident window, while job 10 still crash-looped (dead-lettered at t=+12.0 s).');
    expect(a.actions.some((x) => x.startsWith('Crash-loop detection missed job 10: 2 crashes of its worker did not convict it'))).toBe(true);
    // Negative control: convicted by the crash-loop verdict, it is said to be routed by crash-loop detection.
    const convicted = analyze(run(h.map((e) => (e.type === 'job:dead' ? { ...e, attempt: 2, code: 'crash_loop', reason: 'crashed its worker 2 times' } : e)), { incidentWindow: { fromT: 0, toT: 8_500 } }));
    expect(convicted.mitigation.some((x) => x.startsWith('Crash-loop detection routed job 10 to the dead-letter queue'))).toBe(true);
    expect(convicted.mitigation.some((x) => x.includes('did not convict'))).toBe(false);
  });

  it('says so when a fault left no evidence, and asks for it', () => {
    const a = analyze(run([{ t: 1_000, node: 'nemesis', type: 'fault:injected', fault: 'partition', detail: { node: 'w1' } }]));
    expect(a.rootCause.findings).toContain('Fault `partition` was injected at t=+1.0 s (node=w1), but no evidence that it took effect was recorded.');
    expect(a.actions.some((s) => s.startsWith('Make the fault verifiable: Fault `partition`'))).toBe(true);
  });

  it('clock faults: a NodeRef target names the node, an end event closes the jump rather than starting another', () => {
    const cron = (t: number, occurrences: number, skew: number): HistoryEvent => ({ t, node: 'scheduler-1', nodeTime: BASE + t + skew, type: 'cron:materialized', scheduleId: 's', occurrences, inserted: occurrences, nodeId: 'scheduler-1' });
    const a = analyze(run([
      cron(500, 1, 0),
      { t: 1_000, node: 'nemesis', type: 'fault:injected', fault: 'clock-jump', detail: { target: 'scheduler:1', jumpMs: 3_600_000 } },
      cron(1_500, 60, 3_600_000),
      { t: 5_000, node: 'nemesis', type: 'fault:injected', fault: 'clock-jump', detail: { target: 'scheduler:1', phase: 'end' } },
      cron(5_500, 1, 0),
    ]));
    expect(a.rootCause.clockJumps).toHaveLength(1);
    expect(a.rootCause.findings[0]).toBe("Node scheduler-1's clock jumped +60 min at t=+1.0 s (its own events afterwards ran +60 min from the harness clock); it then materialized 60 occurrences (60 inserted) in 1 pass, of 1 schedule (s ×60), against 1.0 per pass before the jump.");
    expect(a.detection.trigger?.t).toBe(1_000);
    expect(a.timeline.map((e) => e.text)).toContain('Fault ended: `clock-jump` (target=scheduler:1).');
  });

  it('uses the caller\'s incident window when given, else derives it from the first fault to the recovery', () => {
    const h = [sample(0, 0), { t: 500, node: 'nemesis', type: 'fault:injected', fault: 'worker-kill', detail: {} } as HistoryEvent, sample(1_000, 6_000), sample(2_000, 0)];
    expect(analyze(run(h)).window).toEqual({ fromT: 500, toT: 2_000 });
    expect(analyze(run(h, { incidentWindow: { fromT: 100, toT: 900 } })).window).toEqual({ fromT: 100, toT: 900 });
    expect(() => analyze(run(h, { incidentWindow: { fromT: 900, toT: 100 } }))).toThrow(/report input incidentWindow: expected \{fromT, toT\}/);
  });

  it('a breach no alert caught is a detection gap; a breach that never ends is no recovery', () => {
    const a = analyze(run([sample(0, 0), sample(1_000, 6_000), sample(2_000, 7_000)]));
    expect(a.breaches).toEqual([{ fromT: 1_000, toT: null, worstQueue: 'q', worstMs: 7_000 }]);
    expect(a.detection.firstCrossings).toEqual([]);
    expect(a.actions).toContain('Add an alert: oldest-unclaimed-age went over the SLO but no alert signal fired.');
    expect(a.actions.some((s) => s.startsWith('Find out why lane `q` did not recover'))).toBe(true);
    expect(a.mitigation.some((s) => s.startsWith('Oldest-unclaimed-age had not come back under the 5.0 s SLO'))).toBe(true);

    const recovered = analyze(run([sample(0, 0), sample(1_000, 6_000), sample(2_000, 0)]));
    expect(recovered.breaches).toEqual([{ fromT: 1_000, toT: 2_000, worstQueue: 'q', worstMs: 6_000 }]);
    expect(recovered.actions.some((s) => s.includes('did not recover'))).toBe(false);
  });

  it('duplicate deliveries: absorbed when the effect happened once, flagged when it happened twice', () => {
    const h = [...start(100, 20, 'w1', 1), { t: 110, node: 'w1', type: 'effect:applied', jobId: 20, key: 'k20', workerId: 'w1:1' } as HistoryEvent, ...start(6_000, 20, 'w2', 2, 2)];
    const once = analyze(run(h, { final: { jobs: [], deadLetters: [], effects: { k20: 1 } } }));
    expect([once.impact.startedMoreThanOnce, once.impact.duplicatesAbsorbed.count, once.impact.duplicatedEffects.count]).toEqual([1, 1, 0]);
    const twice = analyze(run(h, { final: { jobs: [], deadLetters: [], effects: { k20: 2 } } }));
    expect([twice.impact.duplicatesAbsorbed.count, twice.impact.duplicatedEffects.jobIds]).toEqual([0, [20]]);
    expect(twice.actions).toContain('Side effects ran more than once for 1 job (20): the dedup did not hold.');
  });

  it('due-to-start latency: due from enqueue:ok when there is one, else from the claim; start from job:started', () => {
    const h: HistoryEvent[] = [
      { t: 0, node: 'load', type: 'enqueue:invoke', op: 1, queue: 'q', intendedAt: 0, kind: 'normal' },
      { t: 0, node: 'load', type: 'enqueue:ok', op: 1, jobId: 30, queue: 'q', runAt: BASE + 1_000, intendedAt: 0, sentAt: 0 },
      { t: 4_000, node: 'w1', type: 'job:claimed', jobId: 30, queue: 'q', priority: 0, attempt: 1, workerId: 'w1:1', runAt: BASE + 3_000 },
      { t: 4_500, node: 'w1', type: 'job:started', jobId: 30, queue: 'q', attempt: 1, workerId: 'w1:1' },
      { t: 9_000, node: 'w1', type: 'job:claimed', jobId: 31, queue: 'q', priority: 0, attempt: 1, workerId: 'w1:1', runAt: BASE + 2_000 },
      { t: 9_200, node: 'w1', type: 'job:started', jobId: 31, queue: 'q', attempt: 1, workerId: 'w1:1' },
    ];
    const a = analyze(run(h));
    expect(a.impact.latency).toMatchObject({ jobs: 2, maxMs: 7_200, maxJobId: 31, p50Ms: 3_500 });
    expect(a.impact.delayedJobs).toBe(1);
    expect(percentile([1, 2, 3, 4, 100], 99)).toBe(100);
    expect(percentile([], 99)).toBeNull();
  });

  it('a quiet run whose every sample read zero says so, not that nothing was sampled', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'stampede-report-quiet-'));
    try {
      const files = await renderReport(run([sample(0, 0), sample(1000, 0), sample(2000, 0)]), dir);
      const md = await readFile(files.markdown, 'utf8');
      expect(md).toContain('- Max oldest-unclaimed-age: 0 in every lane over 3 samples (no due job waited unclaimed when sampled).');
      expect(md).toContain('- Peak queue depth: 0 in every lane over 3 samples (no lane had a pending job when sampled).');
      expect(md).not.toContain('no samples recorded');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an interrupted run with no samples still renders, says it was interrupted, and asks for a re-run', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'stampede-report-tiny-'));
    try {
      const files = await renderReport(run([{ t: 0, node: 'harness', type: 'run:phase', phase: 'load' }, { t: 3_000, node: 'harness', type: 'run:phase', phase: 'interrupted' }], { interrupted: true, verdict: 'inconclusive' }), dir);
      const md = await readFile(files.markdown, 'utf8');
      expect(md).toContain('Verdict: INCONCLUSIVE (run interrupted).');
      expect(md).toContain('- Re-run to completion: `npx tsx bin/run-scenario.ts tiny --seed 7`.');
      expect(md).toContain('The run was interrupted before it finished');
      expect(md).toContain('- Max oldest-unclaimed-age: no samples recorded.');
      expect(await readFile(files.charts['queue-depth'], 'utf8')).toContain('>no samples recorded</text>');
      expect((await readFile(files.timeseriesCsv, 'utf8')).trimEnd().split('\n')).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
