/**
 * The OpenTelemetry API, when the application has it installed: an optional
 * peer dependency, loaded once here and never required. Null without it;
 * tracing.ts and metrics/otel-metrics.ts then do nothing.
 */
export type OtelApi = typeof import('@opentelemetry/api');

// A module name the bundler and TypeScript do not resolve at build time for users: it may be absent.
const OTEL_API = '@opentelemetry/api';

export const otel: OtelApi | null = await import(OTEL_API).then(
  (m: OtelApi) => m,
  () => null,
);
