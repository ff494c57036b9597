import type { FirmQueue } from "../firm-queue.js";
import type { ReadSource } from "../facade/read-routing.js";

/** What every page and action is given: the queue, where the dashboard is mounted, and the request's standing. */
export interface PageContext {
  readonly firm: FirmQueue;
  /** The path prefix the dashboard is mounted under ("" at the root), used for every link. */
  readonly base: string;
  /** True when mutations are hidden and refused. */
  readonly readOnly: boolean;
  /** The CSRF token forms of this response carry. */
  readonly csrfToken: string;
  /** Milliseconds between live refreshes; 0 turns them off. */
  readonly refreshMs: number;
  /** Heartbeat age after which a process is marked stale. */
  readonly aliveThresholdMs: number;
  /** Where the pages read (`readUrl`): the replica and its lag, or the primary and why; null without one. */
  readonly replication: ReadSource | null;
  readonly now: Date;
  readonly query: URLSearchParams;
}

/** A dashboard URL: `base + path`, plus the non-empty `params` as a query string. */
export function href(
  context: Pick<PageContext, "base">,
  path: string,
  params: Record<string, string | number | null | undefined> = {},
): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params))
    if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  const query = search.toString();
  return `${context.base}${path}${query ? `?${query}` : ""}`;
}
