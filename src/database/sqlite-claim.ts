import { sql } from "kysely";
import { type ClaimedJob, claimedJobColumns } from "./claimed-job.js";
import type { Db, ReadyClaim, ReadyClaimResult } from "./dialect.js";

/** Thrown inside the claim transaction to roll it back when the claiming process's row is gone. */
class ProcessRowMissing extends Error {}

/**
 * SQLite's claim, inside `transaction` (the dialect's `BEGIN IMMEDIATE`, which serializes every
 * claimer and writer, across processes too, so nothing needs skipping):
 * - one `DELETE … RETURNING` takes up to `limit` ready rows of unpaused queues in (priority, job
 *   id) order;
 * - when it took any, the claiming process's row must exist, or the transaction rolls back and the
 *   caller hears `processGone` (an empty poll does not look);
 * - the claims are inserted, the first `startNow` in claim order (those for free slots) marked
 *   started, and the jobs read back in claim order, each with `claim_started`.
 * Each statement's text is fixed (the ids travel as one JSON array, `json_each`), so the driver's
 * prepared statement is reused however many jobs a claim takes.
 */
export async function claimReadyOnSqlite(
  db: Db,
  transaction: <T>(db: Db, work: (trx: Db) => Promise<T>) => Promise<T>,
  claim: ReadyClaim,
): Promise<ReadyClaimResult> {
  const scope = claim.queue === undefined ? sql`` : sql`AND queue_name = ${claim.queue}`;
  const exclude =
    claim.exclude.length === 0
      ? sql``
      : sql`AND queue_name NOT IN (SELECT value FROM json_each(${JSON.stringify(claim.exclude)}))`;
  try {
    const jobs = await transaction(db, async (trx) => {
      const { rows: taken } = await sql<{ job_id: number; priority: number }>`
        DELETE FROM firm_queue_ready_executions WHERE job_id IN (
          SELECT job_id FROM firm_queue_ready_executions
          WHERE queue_name NOT IN (SELECT queue_name FROM firm_queue_pauses) ${scope} ${exclude}
          ORDER BY priority, job_id LIMIT ${claim.limit}
        ) RETURNING job_id, priority`.execute(trx);
      if (taken.length === 0) return [];
      const { rows: self } = await sql`SELECT 1 FROM firm_queue_processes WHERE id = ${claim.processId}`.execute(trx);
      if (self.length === 0) throw new ProcessRowMissing();
      // RETURNING comes in no promised order: sorted into claim order, so that the first
      // `startNow` array entries (json_each's key counts from 0) are the claims for free slots.
      taken.sort((a, b) => a.priority - b.priority || a.job_id - b.job_id);
      const ids = JSON.stringify(taken.map((row) => row.job_id));
      await sql`INSERT INTO firm_queue_claimed_executions (job_id, process_id, created_at, started_at)
        SELECT value, ${claim.processId}, ${claim.now}, CASE WHEN key < ${claim.startNow} THEN ${claim.now} END
        FROM json_each(${ids})`.execute(trx);
      const { rows } = await sql<ClaimedJob>`
        SELECT ${claimedJobColumns("j")}, t.key < ${claim.startNow} AS claim_started
        FROM json_each(${ids}) t JOIN firm_queue_jobs j ON j.id = t.value ORDER BY j.priority, j.id`.execute(trx);
      return rows;
    });
    return { jobs, processGone: false };
  } catch (error) {
    if (error instanceof ProcessRowMissing) return { jobs: [], processGone: true };
    throw error;
  }
}
