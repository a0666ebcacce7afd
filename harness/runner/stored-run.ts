import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReportInput } from '../../reports/render/index.ts';
import type { CheckerBounds, CheckerName } from '../checkers/index.ts';
import type { HistoryEvent } from '../history.ts';
import type { Scenario } from '../scenario.ts';

/** Everything needed to check a run again without running it: `run.json` beside `history.jsonl`. */
export interface StoredRun {
  scenario: Scenario;
  names: CheckerName[];
  bounds: CheckerBounds;
  report: ReportInput;
}

export function writeStoredRun(dir: string, run: StoredRun): void {
  const { history: _history, ...report } = run.report;
  writeFileSync(join(dir, 'run.json'), JSON.stringify({ ...run, report }, null, 2));
}

/** Reads a stored run back (run.json + history.jsonl); throws naming the file when one is missing or malformed. */
export function readStoredRun(dir: string): StoredRun {
  const read = (name: string) => {
    try {
      return readFileSync(join(dir, name), 'utf8');
    } catch {
      throw new Error(`${join(dir, name)} is missing; expected a run directory written by npm run scenario`);
    }
  };
  let stored: StoredRun;
  try {
    stored = JSON.parse(read('run.json'));
  } catch (err) {
    throw new Error(`${join(dir, 'run.json')}: not a stored run (${(err as Error).message})`);
  }
  const history = read('history.jsonl')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => {
      try {
        return JSON.parse(l) as HistoryEvent;
      } catch {
        throw new Error(`${join(dir, 'history.jsonl')} line ${i + 1}: not JSON`);
      }
    })
    // Lines are in arrival order; a late node report belongs where it happened (stable: ties keep their order).
    .sort((a, b) => a.t - b.t);
  return { ...stored, report: { ...stored.report, history } };
}
