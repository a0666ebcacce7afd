import type { FinalState, HistoryEvent, InvariantResult } from '../../harness/history.ts';

/**
 * Everything a report is rendered from: the run's identity, its verdict, and
 * the recorded history plus final state. The renderer derives every figure
 * from these; nothing is read from the database or the clock.
 */
export interface ReportInput {
  scenario: { name: string; description: string };
  seed: string | number;
  /** The command that replays this run (printed verbatim, passwords redacted). */
  replayCommand: string;
  /** When the run started: epoch ms or an ISO 8601 string. History `t` = 0 is this instant. */
  startedAt: number | string;
  /** When the run finished: epoch ms or an ISO 8601 string. */
  finishedAt: number | string;
  /** True when the run was cut short (SIGINT, deadline); the report says so and the figures cover what was recorded. */
  interrupted: boolean;
  verdict: 'pass' | 'fail' | 'inconclusive';
  /** Jobs per second the load model intended to offer. */
  offeredRate: number;
  /** Jobs per second actually enqueued (acknowledged). */
  achievedRate: number;
  history: HistoryEvent[];
  final: FinalState;
  invariants: InvariantResult[];
  thresholds: {
    /** Oldest-unclaimed-age SLO in ms: the line on the age chart, and the bound for "delayed" and "recovered". */
    oldestAgeSloMs: number;
    /** Dead-letter depth that counts as an alert (drawn on the dead-letter chart). */
    deadLetterDepth: number;
  };
  /** The part of the run (history `t`, ms) the incident covers; shaded on the charts. Derived when absent. */
  incidentWindow?: { fromT: number; toT: number };
}

/** The files `renderReport` wrote, as absolute paths. */
export interface ReportFiles {
  dir: string;
  markdown: string;
  json: string;
  html: string;
  /** Chart SVGs by chart id (`queue-depth`, `oldest-age`, …). */
  charts: Record<string, string>;
  /** One row per `sample` event. */
  timeseriesCsv: string;
  /** One row per second of the run: offered/achieved load and claim/complete/fail/dead counts. */
  ratesCsv: string;
}

export class ReportInputError extends Error {
  override name = 'ReportInputError';
}

const VERDICTS = new Set(['pass', 'fail', 'inconclusive']);

/** Epoch ms of a `startedAt`/`finishedAt` value; throws naming the field when it is neither epoch ms nor ISO 8601. */
export function toEpochMs(value: number | string, field: string): number {
  const ms = typeof value === 'number' ? value : Date.parse(value);
  if (!Number.isFinite(ms)) {
    throw new ReportInputError(`report input ${field}: expected epoch milliseconds or an ISO 8601 string, got ${JSON.stringify(value)}`);
  }
  return ms;
}

/** Checks the shape the renderer relies on; the error names the field and what was expected. */
export function validateReportInput(input: ReportInput): void {
  const fail = (field: string, expected: string, got: unknown) => {
    throw new ReportInputError(`report input ${field}: expected ${expected}, got ${JSON.stringify(got)}`);
  };
  if (!input || typeof input !== 'object') fail('(root)', 'an object', input);
  if (!input.scenario || typeof input.scenario.name !== 'string' || input.scenario.name === '') fail('scenario.name', 'a non-empty string', input.scenario?.name);
  if (typeof input.scenario.description !== 'string') fail('scenario.description', 'a string', input.scenario.description);
  if (typeof input.seed !== 'string' && typeof input.seed !== 'number') fail('seed', 'a string or number', input.seed);
  if (typeof input.replayCommand !== 'string') fail('replayCommand', 'a string', input.replayCommand);
  const started = toEpochMs(input.startedAt, 'startedAt');
  const finished = toEpochMs(input.finishedAt, 'finishedAt');
  if (finished < started) fail('finishedAt', `an instant at or after startedAt (${new Date(started).toISOString()})`, input.finishedAt);
  if (typeof input.interrupted !== 'boolean') fail('interrupted', 'a boolean', input.interrupted);
  if (!VERDICTS.has(input.verdict)) fail('verdict', "'pass', 'fail' or 'inconclusive'", input.verdict);
  for (const k of ['offeredRate', 'achievedRate'] as const) {
    if (typeof input[k] !== 'number' || !Number.isFinite(input[k]) || input[k] < 0) fail(k, 'a finite number of jobs/s ≥ 0', input[k]);
  }
  if (!Array.isArray(input.history)) fail('history', 'an array of history events', typeof input.history);
  input.history.forEach((e, i) => {
    if (!e || typeof e.type !== 'string' || typeof e.t !== 'number' || !Number.isFinite(e.t)) {
      fail(`history[${i}]`, 'an event with a string type and a finite t (ms since start)', e);
    }
  });
  if (!input.final || !Array.isArray(input.final.jobs) || !Array.isArray(input.final.deadLetters) || typeof input.final.effects !== 'object') {
    fail('final', 'a FinalState {jobs[], deadLetters[], effects{}}', input.final && Object.keys(input.final));
  }
  if (!Array.isArray(input.invariants)) fail('invariants', 'an array of InvariantResult', input.invariants);
  input.invariants.forEach((r, i) => {
    if (typeof r?.name !== 'string' || !(r.pass === true || r.pass === false || r.pass === 'unknown' || r.pass === 'not-promised')) {
      fail(`invariants[${i}]`, "{name: string, pass: true | false | 'unknown' | 'not-promised', figure, bound}", r);
    }
  });
  const th = input.thresholds;
  if (!th || !(th.oldestAgeSloMs > 0)) fail('thresholds.oldestAgeSloMs', 'a positive number of ms', th?.oldestAgeSloMs);
  if (!(th.deadLetterDepth >= 0)) fail('thresholds.deadLetterDepth', 'a number ≥ 0', th.deadLetterDepth);
  const w = input.incidentWindow;
  if (w !== undefined && !(Number.isFinite(w.fromT) && Number.isFinite(w.toT) && w.toT >= w.fromT)) {
    fail('incidentWindow', '{fromT, toT} in ms since start with toT ≥ fromT', w);
  }
}
