import type { Db } from "../database/dialect.js";

/** An error as stored in failed executions: enough to understand a failure at 3 a.m. */
export interface StoredError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
}

/** Turn anything a handler threw into a {@link StoredError}. */
export function describeError(error: unknown): StoredError {
  if (error instanceof Error || looksStored(error)) {
    const stored: StoredError = { name: error.name, message: error.message };
    return typeof error.stack === "string" ? { ...stored, stack: error.stack } : stored;
  }
  return { name: "NonError", message: typeof error === "string" ? error : safeJson(error) };
}

/** The stored error of a failed execution or `last_error`, or null when absent or unreadable. */
export function parseStoredError(text: string | null): StoredError | null {
  if (text === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { name: "Error", message: text };
  }
  // Text not of the shape firm-queue writes (altered by hand, or another program's) is shown as it is.
  if (!looksStored(parsed)) return { name: "Error", message: text };
  const stored: StoredError = { name: parsed.name, message: parsed.message };
  return typeof parsed.stack === "string" ? { ...stored, stack: parsed.stack } : stored;
}

/** Move a job to failed executions; `errorJson` is a {@link StoredError} as JSON. */
export async function insertFailedExecution(trx: Db, jobId: number, errorJson: string, now: Date): Promise<void> {
  // A job that just ran has no failed row, unless one was written behind firm-queue's back: the
  // new failure replaces it, where the unique job_id would refuse the insert on every retry of
  // the outcome writer, and the worker would hold the job claimed for ever.
  await trx.deleteFrom("firm_queue_failed_executions").where("job_id", "=", jobId).execute();
  await trx
    .insertInto("firm_queue_failed_executions")
    .values({ job_id: jobId, error: errorJson, created_at: now })
    .execute();
}

/** An error already described (a {@link StoredError}), or an error-like object from another realm. */
function looksStored(value: unknown): value is { name: string; message: string; stack?: unknown } {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as StoredError).name === "string" &&
    typeof (value as StoredError).message === "string"
  );
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
