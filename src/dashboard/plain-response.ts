import type { CoreResponse } from "./core-request.js";
import { SECURITY_HEADERS } from "./security.js";

/** A plain-text response with the security headers. */
export function plainText(status: number, body: string, extra: Record<string, string> = {}): CoreResponse {
  return {
    status,
    headers: { ...SECURITY_HEADERS, "content-type": "text/plain; charset=utf-8", ...extra },
    body,
  };
}

/** What a request the dashboard cannot parse gets: no page, no detail, nothing thrown. */
export const BAD_REQUEST: CoreResponse = plainText(400, "Bad request.");

/** What a failure inside the dashboard gets; the error itself goes to the log, never to the client. */
export const INTERNAL_ERROR: CoreResponse = plainText(500, "Internal error; the details are in the server's log.");
