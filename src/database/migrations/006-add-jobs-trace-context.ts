import type { Migration } from "./table-spec.js";

/**
 * `firm_queue_jobs.trace_context`: the OpenTelemetry context of the span that enqueued the job,
 * as JSON text (W3C `traceparent`, and whatever the application's propagator adds), so the
 * attempt's span joins the trace of the request that enqueued it, on any host. Null when tracing
 * was not in use at enqueue.
 */
export const addJobsTraceContext: Migration = {
  version: "006_add_jobs_trace_context",
  steps: [
    {
      sql: {
        sqlite: "ALTER TABLE firm_queue_jobs ADD COLUMN trace_context TEXT",
        postgres: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS trace_context TEXT",
        mysql: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS trace_context TEXT",
      },
    },
  ],
};
