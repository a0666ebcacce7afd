// The harness's headroom (docs/harness.md, "Headroom"): `steady`, with its full history and every check, at
// rising offered rates; for each, what the generator achieved (acknowledged enqueues over the time from the
// first intended send to the last acknowledgement, from the run's history.jsonl), whether it stayed within 2 %
// of the offer, the run's verdict and the machine's load average around it. The headroom is the highest rate
// held. A figure of the machine it ran on: quote it with its load.
//
//   npx tsx scripts/headroom.ts [--rates 500,1000,1500,2000] [--seed 1]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { rates: { type: 'string', default: '500,1000,1500,2000' }, seed: { type: 'string', default: '1' } } });
const rates = values.rates!.split(',').map((r) => {
  const n = Number(r);
  if (!Number.isInteger(n) || n <= 0) {
    console.error(`--rates: expected positive integers separated by commas, got ${JSON.stringify(values.rates)}`);
    process.exit(2);
  }
  return n;
});

/** Acknowledged enqueues per second of the load, from the history's enqueue:ok events (harness clock, ms). */
function achieved(historyFile: string): { acked: number; perS: number } {
  let acked = 0;
  let first = Infinity;
  let last = -Infinity;
  for (const line of readFileSync(historyFile, 'utf8').split('\n')) {
    if (!line.includes('"enqueue:ok"')) continue;
    const e = JSON.parse(line) as { intendedAt: number; t: number };
    acked++;
    first = Math.min(first, e.intendedAt);
    last = Math.max(last, e.t);
  }
  return { acked, perS: acked / ((last - first) / 1000) };
}

const root = mkdtempSync(join(tmpdir(), 'stampede-headroom-'));
const rows: string[] = [];
let held: number | null = null;
try {
  for (const rate of rates) {
    const out = join(root, String(rate));
    const before = loadavg()[0];
    const run = spawnSync(process.execPath, ['dist/bin/stampede.js', 'scenario', 'steady', '--rate', String(rate), '--seed', values.seed!, '--out', out], { stdio: ['ignore', 'ignore', 'inherit'] });
    const after = loadavg()[0];
    const verdict = ({ 0: 'pass', 1: 'fail', 3: 'inconclusive' } as Record<number, string>)[run.status ?? -1] ?? `exit ${run.status ?? run.signal}`;
    const a = achieved(join(out, 'history.jsonl'));
    const within = a.perS >= rate * 0.98;
    if (within && verdict === 'pass') held = rate;
    rows.push(`| ${rate} | ${a.perS.toFixed(0)} | ${((a.perS / rate) * 100).toFixed(1)} % | ${within ? 'yes' : 'no'} | ${verdict} | ${before.toFixed(1)} / ${after.toFixed(1)} |`);
    console.log(rows.at(-1));
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
console.log(`\n| offered jobs/s | achieved | of offered | within 2 % | verdict | load average before / after |\n| ---: | ---: | ---: | --- | --- | --- |\n${rows.join('\n')}`);
console.log(`\nheadroom: ${held === null ? 'no rate held' : `${held} jobs/s held within 2 % with every check passing`} (seed ${values.seed})`);
