import type { Mutant } from './types.ts';

/**
 * A failed attempt's duration is recorded through OpenTelemetry without its
 * `error.type`, as a refactor that shared the completion's recorder would: a
 * backend reading messaging.process.duration counts every failure as a
 * success, and its error rate reads 0 through an outage. The Prometheus
 * series, fed by another table, stay right.
 */
export const otelFailuresAsSuccesses: Mutant = {
  breaks: "a failed attempt is recorded through OpenTelemetry without error.type, so the OTel error rate reads 0",
  caughtBy: 'otel-counts-agree',
  scenario: 'slow-worker',
  changes: [{ kind: 'otel-recorder', event: 'job:failed', use: (m, e) => m.duration.record(e.durationMs / 1000, { 'messaging.system': 'stampede', 'messaging.operation.name': 'process', 'messaging.destination.name': e.queue }) }],
};
