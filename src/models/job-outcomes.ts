import type { Db } from "../database/dialect.js";
import { readableArguments } from "../serialization.js";
import { parseStoredError, type StoredError } from "./failed-execution.js";

/** How far an awaited job has got: still on its way, or ended one of three ways. */
export type JobOutcome =
  | { readonly state: "pending" }
  | { readonly state: "finished"; readonly result: unknown }
  | { readonly state: "failed"; readonly error: StoredError }
  | { readonly state: "cancelled" };

/** Most ids in one query: a list this long stays well inside every database's parameter limit. */
export const OUTCOME_QUERY_IDS = 1000;

/**
 * Where each of `jobIds` stands, in one query per {@link OUTCOME_QUERY_IDS} ids: the jobs row
 * with its failed execution, if any. Ids with no row are absent from the map. A job is finished
 * when `finished_at` is set without `cancelled_at` (a job its retry policy discarded counts as
 * finished, as `getJob` shows it), cancelled when both are set, failed when it sits in failed
 * executions.
 */
export async function readJobOutcomes(db: Db, jobIds: readonly number[]): Promise<Map<number, JobOutcome>> {
  const outcomes = new Map<number, JobOutcome>();
  for (let start = 0; start < jobIds.length; start += OUTCOME_QUERY_IDS) {
    const rows = await db
      .selectFrom("firm_queue_jobs as j")
      .leftJoin("firm_queue_failed_executions as f", "f.job_id", "j.id")
      .select(["j.id", "j.finished_at", "j.cancelled_at", "j.result", "f.id as failed_id", "f.error"])
      .where("j.id", "in", jobIds.slice(start, start + OUTCOME_QUERY_IDS))
      .execute();
    for (const row of rows) outcomes.set(Number(row.id), outcomeOf(row));
  }
  return outcomes;
}

function outcomeOf(row: {
  finished_at: unknown;
  cancelled_at?: unknown;
  result?: string | null;
  failed_id: unknown;
  error: string | null;
}): JobOutcome {
  if (row.failed_id !== null) {
    return { state: "failed", error: parseStoredError(row.error) ?? { name: "Error", message: "(no error stored)" } };
  }
  if (row.finished_at === null) return { state: "pending" };
  if (row.cancelled_at != null) return { state: "cancelled" };
  return { state: "finished", result: row.result == null ? undefined : readableArguments(row.result) };
}
