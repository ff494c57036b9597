import type { Db } from "../../src/database/dialect.js";
import { toDate } from "../../src/database/schema.js";

/**
 * The most starts that fall in any half-open window `[t, t + windowMs)`: the quantity the
 * rate-limit contract bounds. Times in ms, any order.
 */
export function mostStartsInWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last++) {
    while (sorted[last]! - sorted[first]! >= windowMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/**
 * How much earlier than the claim a handler's own clock reading may place a start: the claim's
 * time (the database clock) is when a start is charged, and the handler notes the host's clock a
 * moment later. Windows checked from handler times are shortened by this much.
 */
export const START_SKEW_MS = 100;

/**
 * When the claim charged a job's start, in ms: its claim's `started_at`, on the database clock,
 * read from the handler. This is the time a budget's window counts, so windows checked from it
 * need no {@link START_SKEW_MS}: a handler that begins late (a busy event loop, a slow claim
 * commit) does not move it. A claim not yet marked started (a job buffered by the ordinary claim)
 * falls back to the handler's clock.
 */
export async function chargedStartMs(db: Db, jobId: number): Promise<number> {
  const claim = await db
    .selectFrom("firm_queue_claimed_executions")
    .select("started_at")
    .where("job_id", "=", jobId)
    .executeTakeFirst();
  return claim?.started_at == null ? Date.now() : toDate(claim.started_at).getTime();
}

/**
 * Starts on the database clock (see {@link chargedStartMs}) kept per label, for a test watching
 * several budgets: `note(label, jobId)` from each handler.
 */
export function chargedStarts(db: Db): {
  readonly starts: Map<string, number[]>;
  readonly note: (label: string, jobId: number) => Promise<void>;
} {
  const starts = new Map<string, number[]>();
  const note = async (label: string, jobId: number) => {
    const at = await chargedStartMs(db, jobId);
    starts.set(label, [...(starts.get(label) ?? []), at]);
  };
  return { starts, note };
}
