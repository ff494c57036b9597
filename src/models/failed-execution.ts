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
  try {
    return JSON.parse(text) as StoredError;
  } catch {
    return { name: "Error", message: text };
  }
}

/** Move a job to failed executions; `errorJson` is a {@link StoredError} as JSON. */
export async function insertFailedExecution(trx: Db, jobId: number, errorJson: string, now: Date): Promise<void> {
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
