/**
 * The OpenTelemetry SDK a scenario with `otel` loads in its workers (harness/otel-export.ts). The packages are
 * stampede's devDependencies, not its dependencies: a project that installed stampede-queue from npm has
 * them only if it installed them itself, and then the run records `otel:absent` and its OpenTelemetry checks
 * say what to install (notHere) instead of the workers failing to start.
 */
const OTEL_SDK = ['@opentelemetry/api', '@opentelemetry/context-async-hooks', '@opentelemetry/sdk-metrics', '@opentelemetry/sdk-trace-base'] as const;

export const OTEL_INSTALL = `npm install --save-dev ${OTEL_SDK.join(' ')}`;

/** The SDK's packages this installation cannot resolve (none: a scenario's workers can load it). */
export function otelSdkMissing(): string[] {
  return OTEL_SDK.filter((name) => {
    try {
      import.meta.resolve(name);
      return false;
    } catch {
      return true;
    }
  });
}
