import { sql } from "kysely";
import type { Db } from "./dialect.js";

/**
 * Listens for the database's word that awaited jobs ended, from any process (PostgreSQL's
 * LISTEN/NOTIFY, sent by migration 011's triggers). `onEnded` gets the id of a job that finished,
 * failed an attempt, was cancelled or deleted, or `undefined` when the connection was
 * (re)established and notifications may have been missed. Resolves to the function that stops
 * listening.
 */
export type EndedJobsListener = (
  onEnded: (jobId: number | undefined) => void,
  onError: (error: unknown) => void,
) => Promise<() => Promise<void>>;

/**
 * PostgreSQL: flag jobs as awaited, so that migration 011's triggers announce their end. Only
 * flagged jobs cost a notification; the flag is never cleared (a job is awaited until it ends).
 */
export async function markJobsAwaited(db: Db, jobIds: readonly number[]): Promise<void> {
  if (jobIds.length === 0) return;
  await sql`UPDATE firm_queue_jobs SET awaited = TRUE WHERE id = ANY(${`{${jobIds.join(",")}}`}::bigint[]) AND NOT awaited`.execute(
    db,
  );
}
