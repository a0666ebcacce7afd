-- Trace context (issue 44): the W3C traceparent of the context that enqueued
-- a job (engine/tracing.ts), given explicitly or captured from the active
-- OpenTelemetry span. NULL: none. Each attempt's span is parented on it (the
-- first) or linked to it (retries). 55 characters when set; nothing for the
-- jobs of an application without tracing.
ALTER TABLE stampede.jobs
  ADD COLUMN trace_parent text CHECK (length(trace_parent) = 55);
