import type { Db, Dialect } from "../database/dialect.js";

/** What taking or giving back a slot needs to know about the key's limit. */
export interface SemaphoreLimit {
  /** Slots per key. */
  readonly to: number;
  /** Milliseconds a semaphore lives after its last acquire or release. */
  readonly duration: number;
}

/**
 * Take one slot of `key` for the caller's transaction. Returns the id of the semaphore row the
 * slot came from (the token its release must name), or null when no slot is free.
 *
 * The common case is one atomic conditional decrement. When no row exists yet, an insert that
 * ignores a conflicting row creates it with one slot taken; two enqueuers racing to create it
 * cannot both win, and on PostgreSQL nothing aborts the transaction. When the row exists with
 * no slot free, it is locked and looked at again: a release that committed meanwhile is seen,
 * and a release that comes later waits for this transaction, so it sees the blocked job the
 * caller writes next and promotes it. Either way no job is left blocked beside a free slot.
 */
export async function acquireSemaphore(
  trx: Db,
  dialect: Dialect,
  key: string,
  limit: SemaphoreLimit,
  now: Date,
): Promise<number | null> {
  const expiresAt = new Date(now.getTime() + limit.duration);
  const taken = await decrement(trx, dialect, key, limit.to, expiresAt, now);
  if (taken !== null) return taken;
  const created = await insertIfMissing(trx, dialect, key, limit.to - 1, expiresAt, now);
  if (created !== null) return created;
  await lockSemaphore(trx, dialect, key);
  return decrement(trx, dialect, key, limit.to, expiresAt, now);
}

/**
 * Give one slot of `key` back: the symmetric increment, capped at the limit. `semaphoreId` is
 * the row the slot was taken from: when that row expired and a new one was created for the key
 * meanwhile, the slot was already counted free there, so nothing is given back (null: a slot
 * taken before semaphore ids were recorded; it goes back to whatever row the key has). A key
 * whose row is gone has every slot free already; nothing to do.
 */
export async function releaseSemaphore(
  trx: Db,
  key: string,
  limit: SemaphoreLimit,
  now: Date,
  semaphoreId: number | null,
): Promise<void> {
  let update = trx
    .updateTable("firm_queue_semaphores")
    .set((eb) => ({
      value: eb
        .case()
        .when("value", "<", limit.to)
        .then(eb("value", "+", 1))
        .else(limit.to)
        .end(),
      expires_at: new Date(now.getTime() + limit.duration),
      updated_at: now,
    }))
    .where("key", "=", key);
  if (semaphoreId !== null) update = update.where("id", "=", semaphoreId);
  await update.execute();
}

/**
 * Remember which semaphore row each job took its slot from (see {@link releaseSemaphore}):
 * one UPDATE per semaphore row, which is one per key in practice.
 */
export async function recordSemaphoreIds(
  trx: Db,
  jobs: readonly { readonly id: number; readonly semaphoreId: number }[],
): Promise<void> {
  const bySemaphore = new Map<number, number[]>();
  for (const job of jobs) {
    const ids = bySemaphore.get(job.semaphoreId);
    if (ids) ids.push(job.id);
    else bySemaphore.set(job.semaphoreId, [job.id]);
  }
  for (const [semaphoreId, jobIds] of bySemaphore) {
    await trx.updateTable("firm_queue_jobs").set({ semaphore_id: semaphoreId }).where("id", "in", jobIds).execute();
  }
}

/** Delete semaphores not changed for their whole duration. Returns how many went. */
export async function deleteExpiredSemaphores(trx: Db, now: Date): Promise<number> {
  const result = await trx.deleteFrom("firm_queue_semaphores").where("expires_at", "<=", now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** One atomic conditional decrement. A value above `to` (the limit was lowered) counts as `to`. */
async function decrement(
  trx: Db,
  dialect: Dialect,
  key: string,
  to: number,
  expiresAt: Date,
  now: Date,
): Promise<number | null> {
  const update = trx
    .updateTable("firm_queue_semaphores")
    .set((eb) => ({
      value: eb
        .case()
        .when("value", ">", to)
        .then(to - 1)
        .else(eb("value", "-", 1))
        .end(),
      expires_at: expiresAt,
      updated_at: now,
    }))
    .where("key", "=", key)
    .where("value", ">", 0);
  if (dialect.returnsFromUpdate) {
    const row = await update.returning("id").executeTakeFirst();
    return row ? Number(row.id) : null;
  }
  const result = await update.executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return null;
  // The row is locked by the update until the transaction ends: this reads the one just changed.
  const row = await trx
    .selectFrom("firm_queue_semaphores")
    .select("id")
    .where("key", "=", key)
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

async function insertIfMissing(
  trx: Db,
  dialect: Dialect,
  key: string,
  value: number,
  expiresAt: Date,
  now: Date,
): Promise<number | null> {
  const insert = trx
    .insertInto("firm_queue_semaphores")
    .values({ key, value, expires_at: expiresAt, created_at: now, updated_at: now });
  const row = await dialect.ignoringConflicts(insert, "key").returning("id").executeTakeFirst();
  return row ? Number(row.id) : null;
}

/** Hold the row until the transaction ends. SQLite's write lock already serializes everything. */
async function lockSemaphore(trx: Db, dialect: Dialect, key: string): Promise<void> {
  await dialect.withRowLock(trx.selectFrom("firm_queue_semaphores").select("id").where("key", "=", key)).execute();
}
