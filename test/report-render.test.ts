import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventOf, HistoryEvent } from '../harness/history.ts';
import { buildReportJson, renderReport, type ReportFiles, type ReportInput } from '../reports/render/index.ts';
import { SECTION_TITLES } from '../reports/render/document.ts';
import { buildIncidentFixture, FIXTURE_CLOCK_JUMP, FIXTURE_SECRETS } from './fixtures/incident-history.ts';

/**
 * Renders the incident fixture once and checks the report against figures
 * this file computes from the history itself, independently of the renderer.
 */
const input = buildIncidentFixture(42);
const of = <T extends HistoryEvent['type']>(type: T) => input.history.filter((e): e is EventOf<T> => e.type === type);

let dir: string;
let files: ReportFiles;
let md: string;
let html: string;
let json: ReturnType<typeof buildReportJson>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stampede-report-'));
  files = await renderReport(input, dir);
  md = await readFile(files.markdown, 'utf8');
  html = await readFile(files.html, 'utf8');
  json = JSON.parse(await readFile(files.json, 'utf8'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Nearest-rank percentile, written here again so the test does not trust the renderer's. */
function nearestRank(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.ceil((p / 100) * s.length) - 1];
}

/** Tag balance of an XML document: every opened element is closed in order. */
function wellFormed(xml: string): boolean {
  const stack: string[] = [];
  for (const m of xml.matchAll(/<(\/?)([a-zA-Z][\w:.-]*)(?:\s[^<>]*?)?(\/?)>/g)) {
    if (m[3] === '/') continue;
    if (m[1] === '/') {
      if (stack.pop() !== m[2]) return false;
    } else stack.push(m[2]);
  }
  return stack.length === 0;
}

describe('report from the incident fixture', () => {
  it('the fixture is deterministic and holds the incident it claims to', () => {
    expect(JSON.stringify(buildIncidentFixture(42))).toBe(JSON.stringify(input));
    expect(of('job:dead').length).toBeGreaterThan(0);
    expect(of('fault:injected').map((f) => f.fault)).toContain('clock-jump');
    expect(of('sample').length).toBeGreaterThan(50);
  });

  it('has every postmortem section, in markdown and in HTML', () => {
    for (const title of SECTION_TITLES) {
      expect(md).toContain(`\n## ${title}\n`);
      expect(html).toMatch(new RegExp(`<h2 id="[^"]*">${title}</h2>`));
    }
    expect(md.startsWith('# Incident report: poison-herd')).toBe(true);
    expect(html).toContain('<title>Incident report: poison-herd (seed 42)</title>');
  });

  it('states the run: seed, replay command (redacted), times and verdict', () => {
    const replay = input.replayCommand.replace(':s3cret-pw@', ':***@');
    expect(replay).not.toBe(input.replayCommand);
    expect(json).toMatchObject({ seed: 42, replayCommand: replay, verdict: 'fail', interrupted: false, startedAt: '2026-11-30T00:00:00.000Z', finishedAt: '2026-11-30T00:01:35.000Z' });
    expect(json.offeredRate).toBe(input.offeredRate);
    expect(json.achievedRate).toBe(input.achievedRate);
    expect(md).toContain(`\`${replay}\``);
    expect(md).toContain('| Seed | `42` |');
    expect(html).toContain(`<code>${replay}</code>`);
  });

  it('lists every invariant with its name, pass, figure, what it judged and bound', () => {
    expect(json.invariants).toEqual(input.invariants.map(({ name, pass, figure, bound, judged }) => ({ name, pass, figure, bound, judged })));
    for (const r of input.invariants) {
      const result = r.pass === true ? 'pass' : r.pass === false ? 'FAIL' : 'unknown';
      expect(md).toContain(`| \`${r.name}\` | ${result} | ${r.figure} | ${r.judged.n.toLocaleString('en-US')} ${r.judged.what} | ${r.bound} |`);
    }
  });

  it('report.json is exactly what buildReportJson returns (what the runner prints with --json)', () => {
    expect(json).toEqual(JSON.parse(JSON.stringify(buildReportJson(input))));
  });

  it('impact figures equal the history: dead letters, max oldest age, p99 due-to-start, duplicates absorbed', () => {
    const dead = new Set(of('job:dead').map((e) => e.jobId));
    expect(json.impact.deadLettered).toBe(dead.size);
    expect(md).toContain(`Jobs dead-lettered: ${dead.size} (${[...dead].map((id) => `job ${id}`).join(', ')})`);

    const maxAge = Math.max(...of('sample').flatMap((s) => Object.values(s.oldestUnclaimedAgeMs)));
    expect(json.impact.maxOldestUnclaimedAgeMs).toBe(maxAge);
    expect(md).toContain(`Max oldest-unclaimed-age: ${(maxAge / 1000).toFixed(1)} s`);

    // Due = runAt from enqueue:ok, else from the first claim; start = first job:started.
    const base = Date.parse(String(input.startedAt));
    const due = new Map<number, number>();
    for (const e of of('enqueue:ok')) due.set(e.jobId, e.runAt);
    for (const e of of('job:claimed')) if (!due.has(e.jobId)) due.set(e.jobId, e.runAt);
    const firstStart = new Map<number, number>();
    for (const e of of('job:started')) if (!firstStart.has(e.jobId)) firstStart.set(e.jobId, base + e.t);
    const latencies = [...firstStart].map(([id, at]) => at - due.get(id)!);
    const p99 = nearestRank(latencies, 99);
    expect(json.impact.dueToStartLatencyMs.p99).toBe(p99);
    expect(json.impact.dueToStartLatencyMs.jobs).toBe(latencies.length);
    expect(md).toContain(`p99 ${(p99 / 1000).toFixed(1)} s`);
    expect(json.impact.jobsDelayedBeyondSlo).toBe(latencies.filter((l) => l > input.thresholds.oldestAgeSloMs).length);

    const starts = new Map<number, number>();
    for (const e of of('job:started')) starts.set(e.jobId, (starts.get(e.jobId) ?? 0) + 1);
    const keyOf = new Map(of('effect:applied').map((e) => [e.jobId, e.key]));
    const absorbed = [...starts].filter(([id, n]) => n > 1 && keyOf.has(id) && input.final.effects[keyOf.get(id)!] === 1).length;
    expect(absorbed).toBeGreaterThan(0);
    expect(json.impact.duplicateDeliveriesAbsorbed).toBe(absorbed);
    expect(md).toContain(`Duplicate deliveries absorbed: ${absorbed} of the ${[...starts.values()].filter((n) => n > 1).length} jobs started more than once`);
  });

  it('derives the root cause from the history: the poison job, the processes it crashed, the clock jump and what it materialized', () => {
    const dead = of('job:dead')[0];
    const crashed = of('process:exited').filter((e) => !e.expected);
    const rootCause = md.slice(md.indexOf('## Root cause'), md.indexOf('## Mitigation'));
    const pids = crashed.map((e) => e.pid);
    expect(rootCause).toContain(`Job ${dead.jobId} (queue \`${dead.queue}\`) crashed ${crashed.length} worker processes (pids ${pids.slice(0, -1).join(', ')} and ${pids.at(-1)}`);
    expect(rootCause).toContain(`dead-lettered at t=+${(dead.t / 1000).toFixed(1)} s after ${dead.attempt} attempts`);
    const after = of('cron:materialized').filter((e) => e.nodeId === FIXTURE_CLOCK_JUMP.node && e.t >= FIXTURE_CLOCK_JUMP.t);
    const occ = after.reduce((n, e) => n + e.occurrences, 0);
    const ins = after.reduce((n, e) => n + e.inserted, 0);
    expect(rootCause).toContain(`Node ${FIXTURE_CLOCK_JUMP.node}'s clock jumped +60 min at t=+30.0 s (its own events afterwards ran +60 min from the harness clock); it then materialized ${occ} occurrences (${ins} inserted) in ${new Set(after.map((e) => e.t)).size} passes`);
    expect(rootCause).toMatch(/A thundering herd: \d+ jobs became due in the one second from t=\+30\.0 s/);
    expect(json.rootCause.crashers).toEqual([expect.objectContaining({ jobId: dead.jobId, crashes: crashed.length, pids })]);
  });

  it('timeline and detection: faults, alert crossings, mitigation, recovery, and which signal fired first', () => {
    const timeline = md.slice(md.indexOf('## Timeline'), md.indexOf('## Detection'));
    for (const f of of('fault:injected')) expect(timeline).toContain(`| ${(f.t / 1000).toFixed(1)} | fault | Fault injected: \`${f.fault}\``);
    for (const a of of('alert:crossed')) expect(timeline).toContain(`| ${(a.t / 1000).toFixed(1)} | alert | Alert \`${a.signal}\``);
    expect(timeline).toContain(`| ${(of('job:dead')[0].t / 1000).toFixed(1)} | mitigation |`);
    const down = of('alert:crossed').find((a) => a.signal === 'oldest-unclaimed-age' && a.direction === 'down')!;
    expect(timeline).toContain(`| ${(down.t / 1000).toFixed(1)} | recovery |`);
    const firstUp = of('alert:crossed').find((a) => a.direction === 'up')!;
    const firstFault = of('fault:injected')[0];
    expect(json.detection.firstSignal).toEqual({ signal: firstUp.signal, t: firstUp.t, afterTriggerMs: firstUp.t - firstFault.t });
    expect(md).toContain(`\`${firstUp.signal}\` fired first, at t=+${(firstUp.t / 1000).toFixed(1)} s`);
  });

  it('does not call the run recovered while the poison still crashes workers after the age came back', async () => {
    // An engine whose crash detection never convicts: the poison crashes a worker until the run ends.
    const looping = buildIncidentFixture(42, Infinity);
    const out = await mkdtemp(join(tmpdir(), 'stampede-report-'));
    try {
      const text = await readFile((await renderReport(looping, out)).markdown, 'utf8');
      const lastCrashT = Math.max(...looping.history.filter((e) => e.type === 'process:exited' && !e.expected).map((e) => e.t));
      expect(text).toContain(`but the crash loop went on: the last worker crash was at t=+${(lastCrashT / 1000).toFixed(1)} s.`);
      expect(text).not.toMatch(/Recovered under the SLO/);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
    expect(md).toMatch(/Recovered under the SLO at t=\+[\d.]+ s\./); // the fixture with detection: recovered
  });

  it('action items follow from the failing and undecided invariants and the faults', () => {
    const actions = md.slice(md.indexOf('## Action items'));
    for (const r of input.invariants.filter((r) => r.pass === false)) expect(actions).toContain(`Fix the \`${r.name}\` violation: measured ${r.figure}`);
    for (const r of input.invariants.filter((r) => r.pass === 'unknown')) expect(actions).toContain(`Make the \`${r.name}\` check decisive`);
    expect(actions).toContain(`Bound catch-up after a clock jump: ${FIXTURE_CLOCK_JUMP.node}`);
  });

  it('writes five charts as well-formed SVG with data marks, embedded in report.md and inlined in report.html', async () => {
    expect(Object.keys(files.charts)).toEqual(['queue-depth', 'oldest-age', 'dead-letter-depth', 'rates', 'load']);
    for (const [id, path] of Object.entries(files.charts)) {
      const svg = await readFile(path, 'utf8');
      expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'), id).toBe(true);
      expect(wellFormed(svg), `${id} is well-formed`).toBe(true);
      // Booleans, not toMatch(svg): a failure should not print 20 kB of SVG.
      expect(/class="mark-line role-mark[^"]*"[^>]*><path[^>]* d="M[\d.-]+,[\d.-]+L/.test(svg), `${id} has a drawn line`).toBe(true);
      // Every chart marks the faults and the alerts on its time axis.
      for (const f of of('fault:injected')) expect(svg.includes(`>${f.fault}</text>`), `${id} marks ${f.fault}`).toBe(true);
      expect(svg.includes('▲ oldest-unclaimed-age</text>'), `${id} marks the alert`).toBe(true);
      expect(md).toContain(`](chart-${id}.svg)`);
      expect(html).toContain(`data-chart="${id}"`);
    }
    expect(html.match(/<svg /g)?.length).toBe(5);
    // Text is laid out without the optional `canvas` package (vega estimates widths): axis titles and labels are there.
    const depthSvg = await readFile(files.charts['queue-depth'], 'utf8');
    expect(depthSvg.includes('>s since start</text>') && depthSvg.includes('>pending jobs</text>') && depthSvg.includes('>Queue depth by lane</text>')).toBe(true);
    expect(await readFile(files.charts['oldest-age'], 'utf8')).toContain('>SLO 5.0 s</text>');
  });

  it('report.html is self-contained: no scripts, no external URLs to fetch', () => {
    expect(html).not.toMatch(/<script|<link|<img|@import|url\(/i);
    expect(html).not.toMatch(/\s(src|href)="https?:/i);
  });

  it('CSV: one timeseries row per sample, one rates row per second', async () => {
    const samples = of('sample');
    const rows = (await readFile(files.timeseriesCsv, 'utf8')).trimEnd().split('\n');
    expect(rows[0]).toBe('t_ms,depth:bulk,depth:critical,oldest_age_ms:bulk,oldest_age_ms:critical,dead_letter_depth,claimed,done,failed,dead');
    expect(rows.length - 1).toBe(samples.length);
    const last = samples.at(-1)!;
    expect(rows.at(-1)).toBe([last.t, last.depthByQueue.bulk, last.depthByQueue.critical, last.oldestUnclaimedAgeMs.bulk, last.oldestUnclaimedAgeMs.critical, last.deadLetterDepth, last.claimed, last.done, last.failed, last.dead].join(','));
    const rates = (await readFile(files.ratesCsv, 'utf8')).trimEnd().split('\n').slice(1).map((r) => r.split(',').map(Number));
    expect(rates.reduce((n, r) => n + r[3], 0)).toBe(of('job:claimed').length);
    expect(rates.reduce((n, r) => n + r[2], 0)).toBe(of('enqueue:ok').length);
  });

  it('no password from any URL in the input reaches any file written', async () => {
    const raw = JSON.stringify(input);
    for (const secret of FIXTURE_SECRETS) expect(raw).toContain(secret); // the control: the input does carry them
    const names = await readdir(dir);
    expect(names.length).toBe(10);
    for (const name of names) {
      const text = await readFile(join(dir, name), 'utf8');
      for (const secret of FIXTURE_SECRETS) expect(text.includes(secret), `${secret} in ${name}`).toBe(false);
    }
    expect(JSON.stringify(buildReportJson(input))).not.toMatch(/s3cret-pw|hunter2-secret/);
  });
});

describe('report input validation', () => {
  const bad = (patch: Partial<ReportInput>) => () => buildReportJson({ ...input, ...patch });
  it('names the field and what was expected', () => {
    expect(bad({ verdict: 'maybe' as never })).toThrow(/report input verdict: expected 'pass', 'fail' or 'inconclusive', got "maybe"/);
    expect(bad({ startedAt: 'yesterday' })).toThrow(/report input startedAt: expected epoch milliseconds or an ISO 8601 string/);
    expect(bad({ thresholds: { oldestAgeSloMs: 0, deadLetterDepth: 1 } })).toThrow(/thresholds.oldestAgeSloMs: expected a positive number of ms/);
    expect(bad({ history: [{ type: 'sample' } as never] })).toThrow(/history\[0\]: expected an event with a string type and a finite t/);
  });
});
