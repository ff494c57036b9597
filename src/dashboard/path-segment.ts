import { PageError } from "./pages/page-error.js";

/**
 * One percent-decoded path segment (a queue name, a task key). A bad escape (`%`, `%zz`, a cut
 * UTF-8 sequence) is the client's mistake: a 400 page, not an error in the server's log.
 */
export function decodeSegment(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new PageError(400, "The path has a malformed percent-escape.");
  }
}
