import { sql } from "kysely";
import type { Database } from "../database/connection.js";
import { deleteJobs } from "../models/job.js";
import { releaseJobKeys } from "../models/job-key.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import { dispatchContext } from "../lifecycle/dispatch-context.js";
import { JobMoves } from "../lifecycle/job-moves.js";
import { compareKeys, releaseSemaphoreAndPromote, slotHolderOf } from "../lifecycle/semaphore-release.js";
import { releaseDependents } from "../lifecycle/dependency-release.js";

/** The tables of jobs waiting to start that clearing a queue empties: ready, and waiting for a rate-limit budget. */
const WAITING_TABLES = ["firm_queue_ready_executions", "firm_queue_throttled_executions"] as const;
type WaitingTable = (typeof WAITING_TABLES)[number];

/**
 * Discard the jobs of `queueName` that wait to start when the call starts (ready, or waiting
 * for their rate-limit budget), `batchSize` per short transaction. Rows a worker is claiming at
 * that moment are skipped (they are about to run); the slots the discarded jobs held are given
 * up. Each job goes with its row (the waiting row is deleted with the job); jobs that depend on
 * one, and its batch, count it as cancelled. Returns how many jobs were discarded.
 */
export async function discardReadyJobs(
  database: Database,
  policies: JobPolicies,
  queueName: string,
  batchSize: number,
  onBatch?: (progress: { readonly batch: number; readonly total: number }) => void,
): Promise<number> {
  let total = 0;
  for (const table of WAITING_TABLES) {
    total = await discardFrom(database, policies, table, queueName, batchSize, total, onBatch);
  }
  return total;
}

/** One waiting table's share of {@link discardReadyJobs}; returns the running total. */
async function discardFrom(
  database: Database,
  policies: JobPolicies,
  table: WaitingTable,
  queueName: string,
  batchSize: number,
  totalBefore: number,
  onBatch?: (progress: { readonly batch: number; readonly total: number }) => void,
): Promise<number> {
  const moves = JobMoves.for(policies.events);
  const context = dispatchContext(database, policies, moves);
  const { db, dialect } = database;
  const newest = await db
    .selectFrom(table)
    .select(sql<number | string | null>`MAX(job_id)`.as("max"))
    .where("queue_name", "=", queueName)
    .executeTakeFirst();
  // Jobs that become ready after the call started are not part of what was asked to clear.
  const lastId = Number(newest?.max ?? 0);
  let afterId = 0;
  let total = totalBefore;
  while (afterId < lastId) {
    const { deleted, seen, nextAfter } = await database.claimTransaction(async (trx) => {
      moves?.reset();
      const query = trx
        // Typed as the ready table: the query reads only job_id and queue_name, which both tables have.
        .selectFrom(`${table} as r` as "firm_queue_ready_executions as r")
        .innerJoin("firm_queue_jobs as j", "j.id", "r.job_id")
        .select(["r.job_id", "j.class_name", "j.concurrency_key", "j.semaphore_id", "j.has_dependents"])
        .where("r.queue_name", "=", queueName)
        .where("r.job_id", ">", afterId)
        .where("r.job_id", "<=", lastId)
        .orderBy("r.job_id")
        .limit(batchSize);
      const rows = await dialect.withSkipLocked(query).execute();
      const now = database.clock.now();
      const ids = rows.map((row) => Number(row.job_id));
      const deleted = await deleteJobs(trx, ids);
      await releaseJobKeys(trx, ids, now);
      // A ready job holds its slot: hand it on. Keys in one order, so transactions cannot deadlock on them.
      const holders = rows
        .filter((row) => row.concurrency_key !== null)
        .map(slotHolderOf)
        .sort((a, b) => compareKeys(a.concurrencyKey!, b.concurrencyKey!));
      for (const holder of holders) await releaseSemaphoreAndPromote(trx, context, holder, now);
      // A discarded job never ends: its dependents take it as cancelled, and so does its batch.
      const told = rows.filter((row) => row.has_dependents !== 0).map((row) => Number(row.job_id));
      if (told.length > 0) await releaseDependents(trx, context, told, "cancelled", now);
      return { deleted, seen: ids.length, nextAfter: ids.length ? Math.max(...ids) : lastId };
    });
    moves?.emit(policies.events);
    total += deleted;
    afterId = nextAfter;
    if (deleted > 0) onBatch?.({ batch: deleted, total });
    if (seen < batchSize) break;
  }
  return total;
}
