import type { Db } from "../database/dialect.js";
import type { DispatchContext } from "./dispatch-context.js";
import { markCancelled } from "../models/job-cancellation.js";
import { releaseJobKeys } from "../models/job-key.js";
import { promoteNextBlocked } from "./semaphore-release.js";
import { releaseDependents } from "./dependency-release.js";

/**
 * Jobs whose claims are being put back in line (a stopping worker) but whose cancel was
 * requested: they end cancelled instead of waiting for another worker. Their slots were already
 * given back by the caller (without promotion); the next blocked job of each key is promoted now.
 */
export async function endCancelled(
  trx: Db,
  context: DispatchContext,
  jobIds: readonly number[],
  now: Date,
): Promise<void> {
  if (jobIds.length === 0) return;
  await markCancelled(trx, jobIds, now);
  await releaseJobKeys(trx, jobIds, now);
  await releaseDependents(trx, context, jobIds, "cancelled", now);
  const keys = await trx
    .selectFrom("firm_queue_jobs")
    .select("concurrency_key")
    .where("id", "in", jobIds)
    .where("concurrency_key", "is not", null)
    .execute();
  for (const key of [...new Set(keys.map((row) => row.concurrency_key!))].sort())
    await promoteNextBlocked(trx, context, key, now);
}
