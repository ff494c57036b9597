import { ConfigurationError } from "../errors.js";

/**
 * Where a page of a job listing ended: the last job's id and, for lists ordered by a time, that
 * job's time. Handed to callers as an opaque string so the order can change without breaking
 * their code; it is not a secret and not signed (a forged one only moves the page).
 */
export interface JobCursor {
  readonly id: number;
  readonly at?: Date;
}

/** Bad cursors are refused with a named error instead of showing a wrong page. */
export class InvalidCursorError extends ConfigurationError {
  constructor(cursor: string) {
    super(`Not a job listing cursor: ${JSON.stringify(cursor.slice(0, 80))} (pass back the nextCursor of a page)`);
  }
}

const MAX_DATE_MS = 8.64e15;

/** The cursor as text: base64url of `[id]` or `[id, epochMs]`. */
export function encodeCursor(cursor: JobCursor): string {
  const parts = cursor.at ? [cursor.id, cursor.at.getTime()] : [cursor.id];
  return Buffer.from(JSON.stringify(parts)).toString("base64url");
}

/** Read a cursor made by {@link encodeCursor}; throws {@link InvalidCursorError} otherwise. */
export function decodeCursor(text: string): JobCursor {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw new InvalidCursorError(text);
  }
  if (
    !Array.isArray(parts) ||
    parts.length < 1 ||
    parts.length > 2 ||
    !parts.every((part) => Number.isSafeInteger(part))
  ) {
    throw new InvalidCursorError(text);
  }
  const [id, at] = parts as number[];
  // A Date holds ±8.64e15 ms; a time beyond that would be an Invalid Date that fails in the query.
  if (id! < 1 || (at !== undefined && Math.abs(at) > MAX_DATE_MS)) throw new InvalidCursorError(text);
  return at === undefined ? { id: id! } : { id: id!, at: new Date(at) };
}
