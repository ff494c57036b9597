import type { RequestHost } from "./host-check.js";
import type { DashboardAuthRequest } from "./options.js";

/** A request as the adapters (Node `http`, Fetch) hand it to the dashboard. */
export interface CoreRequest extends DashboardAuthRequest {
  /** The Host it was sent to, already checked to be one (requests without one get a 400 first). */
  readonly host: RequestHost;
  /** Whether the connection arrived on a loopback address; null when the adapter cannot tell. */
  readonly loopback: boolean | null;
  /** The urlencoded form body of a POST. */
  readForm(): Promise<URLSearchParams>;
}

/** What the adapters write back. */
export interface CoreResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}
