import type { Db, Dialect } from "../database/dialect.js";
import type { JobRow } from "./job.js";
import type { DependencyState } from "./job-dependency.js";

/** A job named in a `dependsOn`, as the enqueue found it under its row lock. */
export interface DependencyJob {
  readonly id: number;
  readonly name: string;
  /** How it ended, or null when it has not ended yet. */
  readonly state: DependencyState | null;
  readonly result: string | null;
}

const CHUNK = 1000;

/**
 * Lock the jobs `ids` until the transaction ends and read how each stands. The lock is what makes
 * a dependency's finish and a new dependent on it agree: either the finish committed first (the
 * job is read ended, counted at once) or it waits for this transaction and then sees the job's
 * `has_dependents` set (and releases the new dependent). Ids with no job are missing from the map.
 */
export async function lockDependencyJobs(
  trx: Db,
  dialect: Dialect,
  ids: readonly number[],
): Promise<Map<number, DependencyJob>> {
  const found = new Map<number, DependencyJob>();
  for (let start = 0; start < ids.length; start += CHUNK) {
    const chunk = ids.slice(start, start + CHUNK);
    const rows = await dialect
      .withRowLock(
        trx
          .selectFrom("firm_queue_jobs")
          .select(["id", "class_name", "finished_at", "cancelled_at", "result"])
          .where("id", "in", chunk),
      )
      .execute();
    // A job that failed for good has no finish time; its failed execution says so (read as
    // committed now: MariaDB's snapshot could be older than the lock just taken).
    const open = rows.filter((row) => row.finished_at === null).map((row) => Number(row.id));
    const failed =
      open.length === 0
        ? new Set<number>()
        : new Set(
            (
              await dialect
                .withLatestRead(
                  trx.selectFrom("firm_queue_failed_executions").select("job_id").where("job_id", "in", open),
                )
                .execute()
            ).map((row) => Number(row.job_id)),
          );
    for (const row of rows) {
      const id = Number(row.id);
      const state: DependencyState | null =
        row.finished_at !== null
          ? row.cancelled_at !== null
            ? "cancelled"
            : "finished"
          : failed.has(id)
            ? "failed"
            : null;
      found.set(id, { id, name: row.class_name, state, result: state === "finished" ? (row.result ?? null) : null });
    }
  }
  return found;
}

/** Note that the jobs `ids` have dependents now: their end must release or cancel them. */
export async function markHavingDependents(trx: Db, ids: readonly number[]): Promise<void> {
  for (let start = 0; start < ids.length; start += CHUNK) {
    await trx
      .updateTable("firm_queue_jobs")
      .set({ has_dependents: 1 })
      .where("id", "in", ids.slice(start, start + CHUNK))
      .where("has_dependents", "=", 0)
      .execute();
  }
}

/**
 * Lock dependents whose dependencies ended, in id order (two finishes releasing the same jobs
 * lock them alike), reading their latest rows: the count of unmet dependencies read here is the
 * one this transaction lowers.
 */
export async function lockDependents(trx: Db, dialect: Dialect, ids: readonly number[]): Promise<JobRow[]> {
  const sorted = [...ids].sort((a, b) => a - b);
  const rows: JobRow[] = [];
  for (let start = 0; start < sorted.length; start += CHUNK) {
    rows.push(
      ...(await dialect
        .withRowLock(
          trx
            .selectFrom("firm_queue_jobs")
            .selectAll()
            .where("id", "in", sorted.slice(start, start + CHUNK))
            .orderBy("id"),
        )
        .execute()),
    );
  }
  return rows;
}

/** Lower the unmet-dependency count of each job in `byAmount`'s lists by that amount. */
export async function lowerUnmetCounts(trx: Db, byAmount: ReadonlyMap<number, readonly number[]>, now: Date) {
  for (const [amount, ids] of byAmount) {
    for (let start = 0; start < ids.length; start += CHUNK) {
      await trx
        .updateTable("firm_queue_jobs")
        .set((eb) => ({ unmet_dependencies: eb("unmet_dependencies", "-", amount), updated_at: now }))
        .where("id", "in", ids.slice(start, start + CHUNK))
        .execute();
    }
  }
}
