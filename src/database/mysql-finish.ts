import { sql } from "kysely";
import type { Db, FinishBatch } from "./dialect.js";
import { inOneBlock } from "./mysql-block.js";

/**
 * MariaDB's record of successful attempts in one round trip (one anonymous block, one
 * transaction): the claims this process still holds among `jobIds` are locked and listed (the
 * stale-worker guard: only those jobs are touched), their jobs marked finished (or deleted when
 * finished jobs are not kept, each together with its claim: the claims table has no foreign key
 * to cascade), and the claims deleted.
 * The claims of `startedIds` (jobs that left the worker's buffer since the last batch) are marked
 * started in the same block. Returns the ids recorded. For jobs without a concurrency key only
 * (see `finishClaimedJobs`).
 *
 * The claims are found through the unique `job_id` index, one lookup per job, never through
 * `(process_id, job_id)`: a long-lived process's range there is mostly claims it has finished and
 * deleted whose entries InnoDB's purge has not removed yet, and each of the three statements
 * would walk them all (on a 20,000-job drain the block took three to five times longer by its
 * tenth batch of 1,000).
 *
 * A job that has dependents is left claimed, for the portable transaction to finish and release
 * them: the first statement joins each claim to its job row and locks both (a locking read sees
 * the latest `has_dependents`, set by a dependent added while the job ran), and the next two touch
 * only the claims it returned.
 */
export async function finishOnMariadb(db: Db, batch: FinishBatch): Promise<number[]> {
  const ids = sql.join(batch.jobIds.map((id) => sql`${id}`));
  const held = sql`c.process_id = ${batch.processId} AND c.job_id IN (${ids}) AND j.has_dependents = 0`;
  const claims = sql`firm_queue_claimed_executions c FORCE INDEX (index_firm_queue_claimed_executions_on_job_id)`;
  const outcome = batch.preserve
    ? sql`UPDATE firm_queue_jobs j JOIN ${claims} ON c.job_id = j.id
        SET j.finished_at = ${batch.now}, j.updated_at = ${batch.now}, j.attempts = j.attempts + 1 WHERE ${held}`
    : sql`DELETE j, c FROM firm_queue_jobs j JOIN ${claims} ON c.job_id = j.id WHERE ${held}`;
  const marks =
    batch.startedIds.length === 0
      ? sql``
      : sql`; UPDATE firm_queue_claimed_executions SET started_at = ${batch.now}
          WHERE job_id IN (${sql.join(batch.startedIds.map((id) => sql`${id}`))})
          AND process_id = ${batch.processId} AND started_at IS NULL`;
  // With finished jobs deleted, their claims went with them (same statement); the claims of jobs
  // left for the portable path must stay, so the last DELETE joins the job rows that remain.
  const [recorded] = (await inOneBlock(
    db,
    sql`SELECT c.job_id FROM ${claims} STRAIGHT_JOIN firm_queue_jobs j ON j.id = c.job_id WHERE ${held} FOR UPDATE;
      ${outcome};
      DELETE c FROM ${claims} JOIN firm_queue_jobs j ON j.id = c.job_id WHERE ${held}${marks}`,
  )) as [{ job_id: number | string }[]];
  return recorded.map((row) => Number(row.job_id));
}
