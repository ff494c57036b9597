import { ResultNotSerializableError, ResultTooLargeError, SerializationError } from "../errors.js";
import { serializeArguments } from "../serialization.js";

/** Largest result stored, in bytes of its JSON: results sit in the jobs table and are read with it. */
export const MAX_RESULT_BYTES = 64 * 1024;

/** Largest progress value stored, in bytes of its JSON. */
export const MAX_PROGRESS_BYTES = 4 * 1024;

/**
 * A handler's return value as stored JSON, in the encoding arguments use (so dates and bigints
 * come back as they went in); null for `undefined` (nothing stored). A value that cannot be
 * encoded, or one past {@link MAX_RESULT_BYTES}, is a named error that fails the attempt.
 */
export function encodeResult(jobName: string, jobId: number, value: unknown): string | null {
  if (value === undefined) return null;
  const text = encode(jobName, jobId, value, "result");
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_RESULT_BYTES) throw new ResultTooLargeError(jobName, jobId, bytes, MAX_RESULT_BYTES);
  return text;
}

/** A progress value as stored JSON; too large or not encodable is a named error thrown to the handler. */
export function encodeProgress(jobName: string, jobId: number, value: unknown): string {
  const text = encode(jobName, jobId, value === undefined ? null : value, "progress");
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_PROGRESS_BYTES) {
    throw new ResultNotSerializableError(
      jobName,
      jobId,
      "progress",
      `${bytes} bytes of JSON, more than the ${MAX_PROGRESS_BYTES} allowed`,
    );
  }
  return text;
}

function encode(jobName: string, jobId: number, value: unknown, what: "result" | "progress"): string {
  try {
    return serializeArguments(jobName, value);
  } catch (error) {
    if (error instanceof SerializationError)
      throw new ResultNotSerializableError(
        jobName,
        jobId,
        what,
        `${error.path.replace(/^args/, what)} ${error.problem}`,
      );
    throw error;
  }
}
