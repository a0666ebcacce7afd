import { readFileSync } from 'node:fs';
import { checkNoEarlyTakeover } from '../harness/checkers/no-early-takeover.ts';
const dir = process.argv[2];
const h = readFileSync(`${dir}/history.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const stored = JSON.parse(readFileSync(`${dir}/run.json`, 'utf8'));
const r = checkNoEarlyTakeover(h, stored.report?.final ?? { jobs: [], deadLetters: [], effects: {} }, { slackMs: 1 });
console.log(JSON.stringify(r.examples, null, 1));
