import { sql, type RawBuilder } from "kysely";
import type { Db, FinishBatch } from "./dialect.js";
import { inOneBlock } from "./mysql-block.js";

/** Ids written out for an `IN (…)` of a MariaDB block (its statements take no bound arrays). */
export function idList(ids: readonly number[]): RawBuilder<unknown> {
  return sql.join(ids.map((id) => sql`${id}`));
}

/** The statement recording the batch's jobs: marked finished, or deleted when finished jobs are not kept. */
export function recordJobs(batch: FinishBatch): RawBuilder<unknown> {
  const ids = idList(batch.jobIds);
  return batch.preserve
    ? sql`UPDATE firm_queue_jobs SET finished_at = ${batch.now}, updated_at = ${batch.now}, attempts = attempts + 1
        WHERE id IN (${ids})`
    : sql`DELETE FROM firm_queue_jobs WHERE id IN (${ids})`;
}

/** The statement (with its `;`) marking the claims of `batch.startedIds` started, or nothing. */
export function startedMarks(batch: FinishBatch): RawBuilder<unknown> {
  return batch.startedIds.length === 0
    ? sql``
    : sql`UPDATE firm_queue_claimed_executions SET started_at = ${batch.now}
        WHERE job_id IN (${idList(batch.startedIds)}) AND process_id = ${batch.processId} AND started_at IS NULL;`;
}

/**
 * Run one of MariaDB's finish blocks, all or none: after `declarations`, a transaction marks the
 * started claims and deletes the claims of the batch's jobs this process holds (the stale-worker
 * guard). Unless every one was held, it rolls back; otherwise `body` runs, which ends the
 * transaction itself and selects `recorded`: 1 once committed, 0 once rolled back. Returns the
 * ids recorded. The claims are deleted by `job_id` and `process_id` together, one exact lookup
 * per job: a range of the process's `(process_id, job_id)` entries would walk those of its
 * deleted claims that InnoDB's purge has not removed yet (on a 20,000-job drain a block took three
 * to five times longer by its tenth batch of 1,000).
 */
export async function finishAllOrNone(
  db: Db,
  batch: FinishBatch,
  declarations: RawBuilder<unknown>,
  body: RawBuilder<unknown>,
): Promise<number[]> {
  const [[outcome]] = (await inOneBlock(
    db,
    sql`${declarations}
      START TRANSACTION;
      ${startedMarks(batch)}
      DELETE FROM firm_queue_claimed_executions
        WHERE job_id IN (${idList(batch.jobIds)}) AND process_id = ${batch.processId};
      IF ROW_COUNT() < ${batch.jobIds.length} THEN
        ROLLBACK;
        SELECT 0 AS recorded;
      ELSE
        ${body};
      END IF`,
    { endsItself: true },
  )) as [{ recorded: number | string }[]];
  return Number(outcome?.recorded) === 1 ? [...batch.jobIds] : [];
}
