import type { Db, Dialect } from "../database/dialect.js";

/** What taking or giving back a slot needs to know about the key's limit. */
export interface SemaphoreLimit {
  /** Slots per key. */
  readonly to: number;
  /** Milliseconds a semaphore lives after its last acquire or release. */
  readonly duration: number;
}

/**
 * Take one slot of `key` for the caller's transaction. Returns false when none is free.
 *
 * The common case is one atomic conditional decrement. When no row exists yet, an insert that
 * ignores a conflicting row creates it with one slot taken; two enqueuers racing to create it
 * cannot both win, and on PostgreSQL nothing aborts the transaction. When the row exists with
 * no slot free, it is locked and looked at again: a release that committed meanwhile is seen,
 * and a release that comes later waits for this transaction, so it sees the blocked job the
 * caller writes next and promotes it. Either way no job is left blocked beside a free slot.
 */
export async function acquireSemaphore(dialect: Dialect, trx: Db, key: string, limit: SemaphoreLimit, now: Date): Promise<boolean> {
  const expiresAt = new Date(now.getTime() + limit.duration);
  if (await decrement(trx, key, limit.to, expiresAt, now)) return true;
  if (await insertIfMissing(dialect, trx, key, limit.to - 1, expiresAt, now)) return true;
  await lockSemaphore(dialect, trx, key);
  return decrement(trx, key, limit.to, expiresAt, now);
}

/**
 * Give one slot of `key` back: the symmetric increment, capped at the limit. A key whose row is
 * gone (expired and deleted by maintenance) has every slot free already; nothing to do.
 */
export async function releaseSemaphore(trx: Db, key: string, limit: SemaphoreLimit, now: Date): Promise<void> {
  await trx
    .updateTable("firm_queue_semaphores")
    .set((eb) => ({
      value: eb.case().when("value", "<", limit.to).then(eb("value", "+", 1)).else(limit.to).end(),
      expires_at: new Date(now.getTime() + limit.duration),
      updated_at: now,
    }))
    .where("key", "=", key)
    .execute();
}

/** Delete semaphores not changed for their whole duration. Returns how many went. */
export async function deleteExpiredSemaphores(trx: Db, now: Date): Promise<number> {
  const result = await trx.deleteFrom("firm_queue_semaphores").where("expires_at", "<=", now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** One atomic conditional decrement. A value above `to` (the limit was lowered) counts as `to`. */
async function decrement(trx: Db, key: string, to: number, expiresAt: Date, now: Date): Promise<boolean> {
  const result = await trx
    .updateTable("firm_queue_semaphores")
    .set((eb) => ({
      value: eb.case().when("value", ">", to).then(to - 1).else(eb("value", "-", 1)).end(),
      expires_at: expiresAt,
      updated_at: now,
    }))
    .where("key", "=", key)
    .where("value", ">", 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

async function insertIfMissing(dialect: Dialect, trx: Db, key: string, value: number, expiresAt: Date, now: Date): Promise<boolean> {
  const insert = trx
    .insertInto("firm_queue_semaphores")
    .values({ key, value, expires_at: expiresAt, created_at: now, updated_at: now });
  const result = await dialect.ignoringConflicts(insert, "key").executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Hold the row until the transaction ends. SQLite's write lock already serializes everything. */
async function lockSemaphore(dialect: Dialect, trx: Db, key: string): Promise<void> {
  await dialect.withRowLock(trx.selectFrom("firm_queue_semaphores").select("id").where("key", "=", key)).execute();
}
