import type { ReportInput } from './input.ts';
import { validateReportInput } from './input.ts';
import { indexHistory, type HistoryIndex } from './job-index.ts';
import { computeImpact, type Impact } from './impact.ts';
import { deriveRootCause, type RootCause } from './root-cause.ts';
import { buildTimeline, detect, findBreaches, incidentWindow, type Breach, type Detection, type TimelineEntry } from './timeline.ts';
import { perSecondRates, type RateRow } from './series.ts';
import { actionItems, mitigationText } from './response.ts';
import { redactDeep } from './redact-deep.ts';
import { writeLedger, type WriteLedger } from './write-ledger.ts';

/** Everything the report says, derived once from the input; the markdown, HTML and JSON outputs all read this. */
export interface Analysis {
  /** The input with every password in a URL redacted: the only copy any output reads. */
  input: ReportInput;
  idx: HistoryIndex;
  impact: Impact;
  rootCause: RootCause;
  breaches: Breach[];
  detection: Detection;
  window: { fromT: number; toT: number } | null;
  timeline: TimelineEntry[];
  rates: RateRow[];
  mitigation: string[];
  actions: string[];
  /** Acknowledged writes across link and database-host faults; null without such faults. */
  writes: WriteLedger | null;
}

export function analyze(raw: ReportInput): Analysis {
  validateReportInput(raw);
  const input = redactDeep(raw);
  const idx = indexHistory(input);
  const impact = computeImpact(input, idx);
  const rootCause = deriveRootCause(input, idx);
  const breaches = findBreaches(idx, input.thresholds.oldestAgeSloMs);
  const detection = detect(idx);
  const window = incidentWindow(input, idx, breaches);
  return {
    input,
    idx,
    impact,
    rootCause,
    breaches,
    detection,
    window,
    timeline: buildTimeline(input, rootCause, breaches),
    rates: perSecondRates(input, idx),
    mitigation: mitigationText(input, idx, rootCause, breaches, window),
    actions: actionItems(input, impact, rootCause, breaches, detection),
    writes: writeLedger(input),
  };
}
