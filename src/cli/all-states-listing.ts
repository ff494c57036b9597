import type { FirmQueue } from "../firm-queue.js";
import { InvalidCursorError } from "../models/job-cursor.js";
import type { JobState } from "../models/job-info.js";
import type { JobPage, JobSummary } from "../models/job-listing.js";

/** The filters of `jobs list` without a state. */
export interface AllStatesQuery {
  readonly queue?: string;
  readonly name?: string;
  readonly key?: string;
  readonly limit: number;
  /** The `nextCursor` of the previous page, or absent for the first. */
  readonly cursor?: string | undefined;
}

/** Where each state's listing stands: its own cursor, null before its first page, false once it is used up. */
type Positions = Partial<Record<JobState, string | null | false>>;

/**
 * One page of jobs of every state, merged newest id first, with a cursor for the next page.
 * Each state's own listing (`firm.inspect.jobs`) is read one bounded page from where it stands,
 * and the merge takes jobs from the front of those pages only, so every matching job comes once
 * over the pages. The next cursor holds each state's own cursor after the jobs taken from it; a
 * state that gave part of its page is read again up to that job (one more bounded read) to get it.
 */
export async function listAllStates(
  firm: FirmQueue,
  states: readonly JobState[],
  query: AllStatesQuery,
): Promise<JobPage> {
  const positions = query.cursor === undefined ? {} : decodePositions(query.cursor, states);
  const filter = {
    ...(query.queue !== undefined ? { queue: query.queue } : {}),
    ...(query.name !== undefined ? { name: query.name } : {}),
    ...(query.key !== undefined ? { key: query.key } : {}),
  };
  const open = states.filter((state) => positions[state] !== false);
  const pages = await Promise.all(
    open.map((state) =>
      firm.inspect.jobs({ ...filter, state, limit: query.limit, cursor: (positions[state] as string | null) ?? null }),
    ),
  );
  const taken = pages.map(() => 0);
  const jobs: JobSummary[] = [];
  while (jobs.length < query.limit) {
    let best = -1;
    for (const [index, page] of pages.entries()) {
      const head = page.jobs[taken[index]!];
      if (head && (best < 0 || head.id > pages[best]!.jobs[taken[best]!]!.id)) best = index;
    }
    if (best < 0) break;
    jobs.push(pages[best]!.jobs[taken[best]!]!);
    taken[best]! += 1;
  }
  const next: Positions = { ...positions };
  await Promise.all(
    open.map(async (state, index) => {
      const page = pages[index]!;
      const used = taken[index]!;
      if (used === page.jobs.length) next[state] = page.nextCursor ?? false;
      else if (used > 0) {
        const upTo = await firm.inspect.jobs({
          ...filter,
          state,
          limit: used,
          cursor: (positions[state] as string | null) ?? null,
        });
        next[state] = upTo.nextCursor ?? false;
      }
    }),
  );
  const more = states.some((state) => next[state] !== false);
  return { jobs, nextCursor: more ? Buffer.from(JSON.stringify(next)).toString("base64url") : null };
}

function decodePositions(text: string, states: readonly JobState[]): Positions {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw new InvalidCursorError(text);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new InvalidCursorError(text);
  for (const [state, position] of Object.entries(value)) {
    const known = (states as readonly string[]).includes(state);
    if (!known || !(position === null || position === false || typeof position === "string"))
      throw new InvalidCursorError(text);
  }
  return value as Positions;
}
