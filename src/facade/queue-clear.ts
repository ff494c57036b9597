import { sql } from "kysely";
import type { Database } from "../database/connection.js";
import { deleteJobs } from "../models/job.js";
import { releaseJobKeys } from "../models/job-key.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import { dispatchContext } from "../lifecycle/dispatch-context.js";
import { compareKeys, releaseSemaphoreAndPromote, slotHolderOf } from "../lifecycle/semaphore-release.js";

/**
 * Discard the jobs ready in `queueName` when the call starts, `batchSize` per short transaction.
 * Ready rows a worker is claiming at that moment are skipped (they are about to run); the slots
 * the discarded jobs held are given up. Returns how many jobs were discarded.
 */
export async function discardReadyJobs(
  database: Database,
  policies: JobPolicies,
  queueName: string,
  batchSize: number,
  onBatch?: (progress: { readonly batch: number; readonly total: number }) => void,
): Promise<number> {
  const context = dispatchContext(database, policies);
  const { db, dialect } = database;
  const newest = await db
    .selectFrom("firm_queue_ready_executions")
    .select(sql<number | string | null>`MAX(job_id)`.as("max"))
    .where("queue_name", "=", queueName)
    .executeTakeFirst();
  // Jobs that become ready after the call started are not part of what was asked to clear.
  const lastId = Number(newest?.max ?? 0);
  let afterId = 0;
  let total = 0;
  while (afterId < lastId) {
    const { deleted, seen, nextAfter } = await database.claimTransaction(async (trx) => {
      const query = trx
        .selectFrom("firm_queue_ready_executions as r")
        .innerJoin("firm_queue_jobs as j", "j.id", "r.job_id")
        .select(["r.job_id", "j.class_name", "j.concurrency_key", "j.semaphore_id"])
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
      return { deleted, seen: ids.length, nextAfter: ids.length ? Math.max(...ids) : lastId };
    });
    total += deleted;
    afterId = nextAfter;
    if (deleted > 0) onBatch?.({ batch: deleted, total });
    if (seen < batchSize) break;
  }
  return total;
}
