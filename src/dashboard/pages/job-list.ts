import type { JobState } from "../../models/job-info.js";
import { STATES } from "../components.js";
import { PageError } from "./page-error.js";

/** The filters of a job listing, read from the query string and checked. */
export interface ListingFilters {
  readonly state: JobState;
  readonly queue?: string;
  readonly name?: string;
  readonly from?: Date;
  readonly to?: Date;
  readonly cursor?: string;
}

/** Read `state`, `queue`, `name`, `from`, `to` and `cursor`; bad values are a 400 page, not a crash. */
export function readFilters(query: URLSearchParams, defaultState: JobState): ListingFilters {
  const state = (query.get("state") || defaultState) as JobState;
  if (!STATES.includes(state)) throw new PageError(400, `Unknown state ${JSON.stringify(state)}`);
  const text = (key: string) => {
    const value = query.get(key)?.trim();
    return value ? value : undefined;
  };
  const time = (key: string) => {
    const value = text(key);
    if (value === undefined) return undefined;
    // datetime-local inputs send no zone: the form labels them UTC.
    const date = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
    if (Number.isNaN(date.getTime())) throw new PageError(400, `Not a time: ${JSON.stringify(value)}`);
    return date;
  };
  const queue = text("queue");
  const name = text("name");
  const from = time("from");
  const to = time("to");
  const cursor = text("cursor");
  return {
    state,
    ...(queue ? { queue } : {}),
    ...(name ? { name } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    ...(cursor ? { cursor } : {}),
  };
}
