import { PageError } from "./pages/page-error.js";

/*
 * Text a request hands the dashboard (path segments, query and form values) on its way to the
 * queue's operations. What no name in the queue's tables can be is refused here as a 400, so it
 * never reaches the database as an error there.
 */

/**
 * One percent-decoded path segment (a queue name, a task key). A bad escape (`%`, `%zz`, a cut
 * UTF-8 sequence) is the client's mistake: a 400 page, not an error in the server's log.
 */
export function decodeSegment(text: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(text);
  } catch {
    throw new PageError(400, "The path has a malformed percent-escape.");
  }
  refuseNul(decoded);
  return decoded;
}

/** Refuse a query string or form with a NUL anywhere (`%00`). */
export function checkParams(params: URLSearchParams): URLSearchParams {
  for (const [key, value] of params) refuseNul(key + value);
  return params;
}

/** PostgreSQL text cannot hold NUL, so no queue, job or task name has one: a 400 on every database alike. */
function refuseNul(text: string): void {
  if (text.includes("\0")) throw new PageError(400, "The request has a NUL character (%00), which no name can hold.");
}
