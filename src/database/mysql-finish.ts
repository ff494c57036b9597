import { sql } from "kysely";
import type { Db, FinishBatch } from "./dialect.js";
import { inOneBlock } from "./mysql-block.js";

/**
 * MariaDB's record of successful attempts in one round trip (one anonymous block, one
 * transaction): the claims this process still holds among `jobIds` are locked and listed (the
 * stale-worker guard: only those jobs are touched), their jobs marked finished (or deleted when
 * finished jobs are not kept, which removes the claims by cascade), and the claims deleted.
 * Returns the ids recorded. For jobs without a concurrency key only (see `finishClaimedJobs`).
 */
export async function finishOnMariadb(db: Db, batch: FinishBatch): Promise<number[]> {
  const ids = sql.join(batch.jobIds.map((id) => sql`${id}`));
  const held = sql`c.process_id = ${batch.processId} AND c.job_id IN (${ids})`;
  const outcome = batch.preserve
    ? sql`UPDATE firm_queue_jobs j JOIN firm_queue_claimed_executions c ON c.job_id = j.id
        SET j.finished_at = ${batch.now}, j.updated_at = ${batch.now}, j.attempts = j.attempts + 1 WHERE ${held}`
    : sql`DELETE j FROM firm_queue_jobs j JOIN firm_queue_claimed_executions c ON c.job_id = j.id WHERE ${held}`;
  const [recorded] = (await inOneBlock(
    db,
    sql`SELECT c.job_id FROM firm_queue_claimed_executions c WHERE ${held} FOR UPDATE;
      ${outcome};
      DELETE c FROM firm_queue_claimed_executions c WHERE ${held}`,
  )) as [{ job_id: number | string }[]];
  return recorded.map((row) => Number(row.job_id));
}
