import type { Db, Dialect } from "../database/dialect.js";

/** How a batch stands: `pending` while some of its jobs have not ended, then how it ended. */
export type BatchState = "pending" | "finished" | "failed" | "cancelled";

/** A batch row as read from the database. */
export interface BatchRow extends BatchCounts {
  readonly id: number;
  readonly state: BatchState;
  /** JSON of the callbacks (see `BatchCallbacks` in lifecycle/batch-progress.ts). */
  readonly callbacks: string;
}

/** The counts of a batch after a change, written back whole while its row is locked. */
export interface BatchCounts {
  /** Its jobs, those added by `context.batch.add` included. */
  readonly total: number;
  /** Jobs that have not ended yet. */
  readonly pending: number;
  readonly finished: number;
  /** Jobs that failed for good. */
  readonly failed: number;
  readonly cancelled: number;
}

const COLUMNS = ["id", "state", "total", "pending", "finished", "failed", "cancelled", "callbacks"] as const;

/** Write a new batch of `total` jobs, none ended yet; returns its id. */
export async function insertBatch(trx: Db, total: number, callbacks: string, now: Date): Promise<number> {
  const row = await trx
    .insertInto("firm_queue_batches")
    .values({
      state: "pending",
      total,
      pending: total,
      finished: 0,
      failed: 0,
      cancelled: 0,
      callbacks,
      created_at: now,
      updated_at: now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/**
 * Lock batch rows until the transaction ends, in id order (so two transactions ending jobs of the
 * same batches lock them alike), and read them as they are now. This lock is what serialises the
 * ends of a batch's jobs on different workers: each reads the counts the one before it wrote.
 */
export async function lockBatches(trx: Db, dialect: Dialect, ids: readonly number[]): Promise<BatchRow[]> {
  if (ids.length === 0) return [];
  const rows = await dialect
    .withRowLock(trx.selectFrom("firm_queue_batches").select(COLUMNS).where("id", "in", ids).orderBy("id"))
    .execute();
  return rows.map(toBatchRow);
}

/** Write a locked batch's new counts; `ended` also sets its final state and end time. */
export async function writeBatchCounts(
  trx: Db,
  id: number,
  counts: BatchCounts,
  now: Date,
  ended: BatchState | null = null,
): Promise<void> {
  await trx
    .updateTable("firm_queue_batches")
    .set({ ...counts, updated_at: now, ...(ended === null ? {} : { state: ended, ended_at: now }) })
    .where("id", "=", id)
    .execute();
}

/** Rewrite a locked batch's callbacks column (once it ends: with the ids of the callback jobs). */
export async function writeCallbacks(trx: Db, id: number, callbacks: string): Promise<void> {
  await trx.updateTable("firm_queue_batches").set({ callbacks }).where("id", "=", id).execute();
}

/** One batch as it stands, or undefined when there is none with that id. */
export async function readBatch(db: Db, id: number): Promise<BatchRow | undefined> {
  const row = await db.selectFrom("firm_queue_batches").select(COLUMNS).where("id", "=", id).executeTakeFirst();
  return row === undefined ? undefined : toBatchRow(row);
}

function toBatchRow(row: {
  id: number;
  state: string;
  total: number;
  pending: number;
  finished: number;
  failed: number;
  cancelled: number;
  callbacks: string;
}): BatchRow {
  return {
    id: Number(row.id),
    state: row.state as BatchState,
    total: Number(row.total),
    pending: Number(row.pending),
    finished: Number(row.finished),
    failed: Number(row.failed),
    cancelled: Number(row.cancelled),
    callbacks: row.callbacks,
  };
}
