import { readFileSync } from 'node:fs';
import { runCheckers } from '../harness/checkers/index.ts';
const dir = process.argv[2];
const h = readFileSync(`${dir}/history.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const stored = JSON.parse(readFileSync(`${dir}/run.json`, 'utf8'));
for (const r of runCheckers(process.argv.slice(3), h, stored.report.final, stored.bounds)) console.log(r.name, r.pass, r.figure, JSON.stringify(r.examples ?? []).slice(0, 800));
